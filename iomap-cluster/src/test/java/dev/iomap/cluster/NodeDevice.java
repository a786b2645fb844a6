package dev.iomap.cluster;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One node's view of a shared device, for tests: counts the reads, and the writes, bytes and flushes that reach the
 * device, and can be cut like the power of that node's machine: from {@link #cut} on, nothing of it
 * reaches the device (writes fail, flushes fail) and the refused calls are counted. Closing does not
 * close the shared device. Thread-safe.
 */
final class NodeDevice implements BlockDevice {
    private final BlockDevice shared;
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong bytesWritten = new AtomicLong();
    private final AtomicLong flushes = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private volatile boolean cut;

    NodeDevice(BlockDevice shared) {
        this.shared = shared;
    }

    /** Cuts the power: no later write or flush reaches the shared device. */
    void cut() {
        cut = true;
    }

    /** @return reads passed to the shared device */
    long reads() {
        return reads.get();
    }

    /** @return writes that reached the shared device */
    long writes() {
        return writes.get();
    }

    /** @return bytes that reached the shared device */
    long bytesWritten() {
        return bytesWritten.get();
    }

    /** @return flushes passed to the shared device */
    long flushes() {
        return flushes.get();
    }

    /** @return writes, flushes and discards refused after the cut */
    long refused() {
        return refused.get();
    }

    @Override
    public int blockSize() {
        return shared.blockSize();
    }

    @Override
    public long capacity() {
        return shared.capacity();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        reads.incrementAndGet();
        shared.read(offset, dst);
    }

    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        if (cut) {
            refused.incrementAndGet();
            return CompletableFuture.failedFuture(new IOException("power cut: write at " + offset + " lost"));
        }
        writes.incrementAndGet();
        bytesWritten.addAndGet(srcs.stream().mapToLong(ByteBuffer::remaining).sum());
        return shared.write(offset, srcs, purpose);
    }

    @Override
    public void flush() throws IOException {
        if (cut) {
            refused.incrementAndGet();
            throw new IOException("power cut: flush lost");
        }
        flushes.incrementAndGet();
        shared.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        if (cut) {
            refused.incrementAndGet();
            throw new IOException("power cut: discard lost");
        }
        writes.incrementAndGet();
        shared.discard(offset, length);
    }

    @Override
    public DeviceStats stats() {
        return shared.stats();
    }

    /** Does nothing: the shared device is the test's. */
    @Override
    public void close() {
    }
}
