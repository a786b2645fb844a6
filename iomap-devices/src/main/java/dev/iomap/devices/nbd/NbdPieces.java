package dev.iomap.devices.nbd;

import dev.iomap.device.DeviceIoException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the device does with the NBD requests one call is cut into (none longer than the server's
 * maximum payload): slicing a write's buffers, waiting for an answer, combining the answers.
 */
final class NbdPieces {
    private NbdPieces() {
    }

    /**
     * Waits for a request's answer, uninterruptibly: an interrupt is kept and set again on return.
     *
     * @param request the request
     * @param device what to name in a message
     * @return a read's data; null for other commands
     * @throws IOException as the request failed (its own {@link IOException}, or a {@link DeviceIoException}
     *     wrapping anything else that is not unchecked)
     */
    static byte[] await(NbdRequest request, Object device) throws IOException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return request.done.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof IOException io) {
                        throw io;
                    }
                    if (cause instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    throw new DeviceIoException(request + " of " + device + " failed: " + cause, request.offset,
                            request.length, cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits for each request in turn, as {@link #await(NbdRequest, Object)}.
     *
     * @param pieces the requests
     * @param device what to name in a message
     * @throws IOException as the first one that failed
     */
    static void awaitAll(List<NbdRequest> pieces, Object device) throws IOException {
        for (NbdRequest piece : pieces) {
            await(piece, device);
        }
    }

    /**
     * @param pieces the requests of one write
     * @return a future completing when every piece did, or exceptionally with the first piece's failure
     *     itself (not wrapped), as a device's write future does
     */
    static CompletableFuture<Void> allDone(List<NbdRequest> pieces) {
        var all = new CompletableFuture<Void>();
        if (pieces.isEmpty()) {
            all.complete(null);
            return all;
        }
        var left = new AtomicInteger(pieces.size());
        for (NbdRequest piece : pieces) {
            piece.done.whenComplete((data, error) -> {
                if (error != null) {
                    all.completeExceptionally(error);
                } else if (left.decrementAndGet() == 0) {
                    all.complete(null);
                }
            });
        }
        return all;
    }

    /**
     * @param data buffers laid one after the other (their remaining bytes)
     * @param from the first byte wanted
     * @param length how many
     * @return slices of the buffers holding bytes {@code [from, from + length)}; positions unchanged
     */
    static List<ByteBuffer> slice(List<ByteBuffer> data, long from, int length) {
        List<ByteBuffer> slices = new ArrayList<>();
        long start = 0;
        long end = from + length;
        for (ByteBuffer buffer : data) {
            long bufferEnd = start + buffer.remaining();
            if (bufferEnd > from && start < end) {
                int skip = (int) Math.max(0, from - start);
                int take = (int) (Math.min(bufferEnd, end) - Math.max(start, from));
                slices.add(buffer.slice(buffer.position() + skip, take));
            }
            start = bufferEnd;
        }
        return slices;
    }
}
