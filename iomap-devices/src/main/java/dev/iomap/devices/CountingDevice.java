package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Wraps a device, counts what passes through it ({@link #stats()}, independent of the wrapped
 * device's own counters) and, while recording is on, remembers every request so that a test can
 * learn where a filesystem put its data or whether an fsync flushed.
 *
 * <p>Thread-safe. {@link #close()} closes the wrapped device.
 */
public final class CountingDevice implements BlockDevice {
    private final BlockDevice inner;
    private final DeviceCounters counters = new DeviceCounters();
    private final List<Request> requests = new ArrayList<>();
    private boolean recording;

    /**
     * One request seen while recording.
     *
     * @param kind read, write, flush or discard
     * @param offset device offset (0 for a flush)
     * @param length bytes (0 for a flush)
     * @param purpose for writes, the purpose; else null
     */
    public record Request(Fault.Kind kind, long offset, long length, IoPurpose purpose) {
    }

    /** @param inner the device to count */
    public CountingDevice(BlockDevice inner) {
        this.inner = Objects.requireNonNull(inner, "inner");
    }

    /** @return the wrapped device */
    public BlockDevice inner() {
        return inner;
    }

    /**
     * Starts or stops remembering requests (counting never stops).
     *
     * @param on whether to record
     */
    public synchronized void record(boolean on) {
        recording = on;
    }

    /** @return the requests recorded so far, oldest first */
    public synchronized List<Request> requests() {
        return List.copyOf(requests);
    }

    /** Forgets the recorded requests. */
    public synchronized void clearRequests() {
        requests.clear();
    }

    private synchronized void note(Fault.Kind kind, long offset, long length, IoPurpose purpose) {
        if (recording) {
            requests.add(new Request(kind, offset, length, purpose));
        }
    }

    @Override
    public int blockSize() {
        return inner.blockSize();
    }

    @Override
    public long capacity() {
        return inner.capacity();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int length = dst.remaining();
        inner.read(offset, dst);
        counters.countRead(length);
        note(Fault.Kind.READ, offset, length, null);
    }

    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        long length = DeviceCounters.totalRemaining(srcs);
        return inner.write(offset, srcs, purpose).thenRun(() -> {
            counters.countWrite(length, purpose);
            note(Fault.Kind.WRITE, offset, length, purpose);
        });
    }

    @Override
    public void flush() throws IOException {
        inner.flush();
        counters.countFlush();
        note(Fault.Kind.FLUSH, 0, 0, null);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        inner.discard(offset, length);
        counters.countDiscard(length);
        note(Fault.Kind.DISCARD, offset, length, null);
    }

    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    @Override
    public void close() throws IOException {
        inner.close();
    }
}
