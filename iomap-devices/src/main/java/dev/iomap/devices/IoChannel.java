package dev.iomap.devices;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;

/**
 * The channel a {@link FileBlockDevice} reads and writes through, used directly by the calling
 * thread, and opened again if an interrupt closes it.
 *
 * <p>A {@link FileChannel} is interruptible: interrupting a thread inside one of its calls closes the
 * channel for every thread. Handing each call to a thread nobody interrupts avoids that, but costs
 * two thread switches per call (about 30 microseconds each on a small virtual machine, as much as
 * the disk's own flush). Instead {@link #call} clears the caller's interrupt status before the call
 * (so an interrupt made earlier never reaches the channel) and sets it again afterwards; an
 * interrupt that arrives during the call closes the channel, and then this class opens the file
 * again with the same options and runs the call again, in that thread and in every other thread
 * whose call the close cut short. Positional reads, writes and syncs are safe to repeat: a write in
 * flight never overlaps another write to the same range (the device's contract), so writing the same
 * bytes again changes nothing, and a sync of the reopened file covers every earlier write (a sync
 * belongs to the file, not to a descriptor).
 *
 * <p>The device's lock is on a descriptor of its own, so reopening never drops it. Thread-safe.
 */
final class IoChannel {
    /** A repeatable call on the channel. */
    @FunctionalInterface
    interface Call<T> {
        /**
         * @param io the channel's positional I/O
         * @param channel the channel itself
         * @return the call's result
         */
        T run(PositionalIo io, FileChannel channel) throws IOException;
    }

    /** The channel and its positional I/O, swapped together when reopened. */
    private record Open(FileChannel channel, PositionalIo io) {}

    private final Path path;
    private final OpenOption[] options;
    private final int directIoAlignment;
    /** Gathering direct writes beside the channel, or null; closed with it. */
    private final VectoredWrites vectored;
    private final Object reopening = new Object();
    private volatile Open open;
    private volatile boolean closed;
    /** How many times the file was opened again; guarded by {@link #reopening}. */
    private long reopens;

    /**
     * @param path the file
     * @param channel the file, already opened with {@code options}
     * @param directIoAlignment the alignment if opened with {@code O_DIRECT}; 0 if not
     * @param vectored gathering direct writes to the same file, or null; this channel owns it from now
     * @param options what the channel was opened with, to open it again the same way
     */
    IoChannel(Path path, FileChannel channel, int directIoAlignment, VectoredWrites vectored,
            OpenOption... options) {
        this.path = path;
        this.options = options.clone();
        this.vectored = vectored;
        this.directIoAlignment = directIoAlignment;
        this.open = new Open(channel, new PositionalIo(channel, directIoAlignment, vectored));
    }

    /**
     * Runs {@code call} in this thread, again (as often as needed) if an interrupt closes the channel
     * during it. The caller's interrupt status is the same on return as on entry, plus any interrupt
     * that arrived in between.
     *
     * @return what the call returned
     * @throws ClosedChannelException if {@link #close()} was called (before or during the call)
     * @throws IOException the call's own I/O error
     */
    <T> T call(Call<T> call) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            while (true) {
                Open current = open;
                try {
                    return call.run(current.io(), current.channel());
                } catch (ClosedChannelException e) {
                    if (closed) {
                        throw e;
                    }
                    if (e instanceof ClosedByInterruptException) {
                        interrupted |= Thread.interrupted();
                    }
                    reopen(current);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Opens the file again unless another thread already replaced {@code closedOne}. */
    private void reopen(Open closedOne) throws IOException {
        synchronized (reopening) {
            if (closed) {
                throw new ClosedChannelException();
            }
            if (open == closedOne) {
                FileChannel channel = FileChannel.open(path, options);
                open = new Open(channel, new PositionalIo(channel, directIoAlignment, vectored));
                reopens++;
            }
        }
    }

    /** @return whether writes of several buffers can go out as gathering direct writes */
    boolean gathers() {
        return vectored != null;
    }

    /** @return how many gathering direct writes ({@code pwritev} calls) were made; 0 without them */
    long gatheringWrites() {
        return vectored == null ? 0 : vectored.calls();
    }

    /** @return how many times an interrupt made this open the file again */
    long reopens() {
        synchronized (reopening) {
            return reopens;
        }
    }

    /**
     * Closes the channel (calls in flight and later fail with {@link ClosedChannelException}) and the
     * gathering direct writes, which first wait for their writes in progress.
     */
    void close() throws IOException {
        synchronized (reopening) {
            closed = true;
            try {
                open.channel().close();
            } finally {
                if (vectored != null) {
                    vectored.close();
                }
            }
        }
    }
}
