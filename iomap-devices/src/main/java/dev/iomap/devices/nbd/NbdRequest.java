package dev.iomap.devices.nbd;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One NBD command as the device issues it: at most one server maximum payload long, sent again on
 * every new connection until it is answered. {@link #done} completes once, with the data of a read
 * (null for other commands), or exceptionally with what the caller is told.
 */
final class NbdRequest {
    final int command;
    final int flags;
    final long offset;
    final int length;
    /** A write's data: duplicates, read by the connection's sender thread, never changed. */
    final List<ByteBuffer> data;
    /** Whether the device issued it on its own account (a flush trimming the replay log, a replay). */
    final boolean internal;
    final CompletableFuture<byte[]> done = new CompletableFuture<>();
    /**
     * For a flush: the last replay log entry acknowledged before it was handed to the connection it is
     * answered on, set under the device's lock at each send; what its success makes durable.
     */
    long logMark;
    /** How many connections it was handed to, under the device's lock; for tests. */
    int sends;

    NbdRequest(int command, int flags, long offset, int length, List<ByteBuffer> data, boolean internal) {
        this.command = command;
        this.flags = flags;
        this.offset = offset;
        this.length = length;
        this.data = data;
        this.internal = internal;
    }

    /** @return whether it changes the export (a write, write-zeroes or trim) */
    boolean writes() {
        return command == NbdProtocol.NBD_CMD_WRITE || command == NbdProtocol.NBD_CMD_WRITE_ZEROES
                || command == NbdProtocol.NBD_CMD_TRIM;
    }

    /** @return the command and its range, for messages */
    @Override
    public String toString() {
        return NbdProtocol.commandName(command) + " [" + offset + ", +" + length + ")";
    }
}
