package dev.iomap.devices.nbd;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The writes the server acknowledged since the last flush it acknowledged, with copies of their
 * data, in the order of their acknowledgements: what a server that restarted may have lost from its
 * cache, and the device therefore sends again on a new connection before anything else (see
 * {@link NbdBlockDevice}). A flush's success drops every entry acknowledged before the flush was
 * sent. Not thread-safe: the device guards it with its lock ({@link #replay} works on a copy of the
 * entries).
 */
final class ReplayLog {
    /**
     * One acknowledged write.
     *
     * @param sequence its place in the order of acknowledgements, from 1
     * @param command {@code NBD_CMD_WRITE}, {@code NBD_CMD_WRITE_ZEROES} or {@code NBD_CMD_TRIM}
     * @param offset where it starts
     * @param length its bytes
     * @param data a write's bytes (a copy); null for zeroes and trims
     */
    record Entry(long sequence, int command, long offset, int length, byte[] data) {
        /** @return the request that does it again (no FUA: a later flush covers it) */
        NbdRequest request() {
            List<ByteBuffer> payload = data == null ? List.of() : List.of(ByteBuffer.wrap(data));
            return new NbdRequest(command, 0, offset, length, payload, true);
        }

        /** @return whether it and {@code other} touch a common byte */
        boolean overlaps(Entry other) {
            return offset < other.offset + other.length && other.offset < offset + length;
        }
    }

    /** Writes sent together at most when replaying. */
    private static final int REPLAY_BATCH = 256;

    private final ArrayDeque<Entry> entries = new ArrayDeque<>();
    private long lastSequence;
    private long bytes;

    /**
     * Records an acknowledged write, copying its data (the caller may reuse its buffers once told).
     *
     * @param request a request that {@link NbdRequest#writes() writes}
     */
    void add(NbdRequest request) {
        byte[] copy = null;
        if (request.command == NbdProtocol.NBD_CMD_WRITE) {
            copy = new byte[request.length];
            int at = 0;
            for (ByteBuffer data : request.data) {
                int n = data.remaining();
                data.get(data.position(), copy, at, n);
                at += n;
            }
            bytes += request.length;
        }
        entries.add(new Entry(++lastSequence, request.command, request.offset, request.length, copy));
    }

    /** @return the sequence of the last entry added, 0 before any; a flush sent now covers up to it */
    long lastSequence() {
        return lastSequence;
    }

    /**
     * Drops what a flush made durable.
     *
     * @param sequence the {@link #lastSequence()} when the flush was sent
     */
    void dropThrough(long sequence) {
        while (!entries.isEmpty() && entries.peekFirst().sequence() <= sequence) {
            Entry dropped = entries.removeFirst();
            if (dropped.data() != null) {
                bytes -= dropped.length();
            }
        }
    }

    /** @return bytes of data held */
    long bytes() {
        return bytes;
    }

    /** @return how many writes are held */
    int size() {
        return entries.size();
    }

    /** @return the entries, oldest first, as a list that does not change with the log */
    List<Entry> entries() {
        return new ArrayList<>(entries);
    }

    /**
     * Sends entries again on a new connection, in their order, waiting for each batch: a batch holds no
     * two writes that overlap (nor more than {@value #REPLAY_BATCH}), so the server, which may do the
     * requests in flight in any order, cannot put an older write over a newer one.
     *
     * @param entries what {@link #entries()} gave
     * @param on the connection
     * @param export its export, for the reply timeout and messages
     * @throws IOException if the connection fails, a reply does not come within the reply timeout, or the
     *     server answers a write with an error
     */
    static void replay(List<Entry> entries, NbdConnection on, NbdExport export) throws IOException {
        List<Entry> batch = new ArrayList<>();
        for (Entry entry : entries) {
            if (batch.size() == REPLAY_BATCH || batch.stream().anyMatch(entry::overlaps)) {
                replayBatch(batch, on, export);
                batch.clear();
            }
            batch.add(entry);
        }
        replayBatch(batch, on, export);
    }

    private static void replayBatch(List<Entry> batch, NbdConnection on, NbdExport export) throws IOException {
        List<CompletableFuture<NbdReply>> replies = new ArrayList<>();
        for (Entry entry : batch) {
            replies.add(on.send(entry.request()));
        }
        for (CompletableFuture<NbdReply> answer : replies) {
            NbdReply reply;
            try {
                reply = answer.get(export.options().replyTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
            } catch (TimeoutException | InterruptedException e) {
                throw new IOException(export + ": no answer to a replayed write within the reply timeout", e);
            }
            if (reply.error() != 0) {
                throw new IOException(export + ": the server answered a replayed write with "
                        + NbdProtocol.errorName(reply.error()));
            }
        }
    }
}
