package dev.iomap.adapter.gfs2;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The shared device as a cluster node writes it: every write, flush and discard first asks the node's
 * fence ({@link dev.iomap.spi.lock.ClusterContext#checkWrite}), and once the fence has tripped fails with
 * the fence's typed error (a {@link dev.iomap.api.FilesystemShutdownException}, ZooKeeper's
 * {@code NodeFencedException}) without reaching the device. Everything a cluster mount writes goes
 * through it: the journal, metadata written home, ordered and journaled data, and the core's data
 * writeback (gfs2-like's {@code submitIoend} writes to this device, not to the one the core has). Reads
 * pass through. Closing it does not close the device below (the mount does not own it).
 *
 * <p>The check is made when a write is issued; a write issued before the fence tripped may still be in
 * flight when it trips (the recovery margin of the cluster covers those). Thread-safe.
 */
final class FencedDevice implements BlockDevice {
    /** The fence check: throws once the node must write nothing more. */
    @FunctionalInterface
    interface Check {
        /** @throws IOException once fenced: the reason, typed */
        void check() throws IOException;
    }

    private final BlockDevice below;
    private volatile Check fence;
    private final AtomicLong refused = new AtomicLong();

    /**
     * @param below the shared device
     * @param fence the fence, or null until {@link #arm} (no check: joining, before the node has one)
     */
    FencedDevice(BlockDevice below, Check fence) {
        this.below = Objects.requireNonNull(below, "below");
        this.fence = fence;
    }

    /**
     * Sets the fence checked from now on.
     *
     * @param check the node's fence
     */
    void arm(Check check) {
        this.fence = Objects.requireNonNull(check, "check");
    }

    /** @return how many writes, flushes and discards the fence refused so far */
    long refused() {
        return refused.get();
    }

    private void check() throws IOException {
        Check f = fence;
        if (f != null) {
            try {
                f.check();
            } catch (IOException | RuntimeException e) {
                refused.incrementAndGet();
                throw e;
            }
        }
    }

    @Override
    public int blockSize() {
        return below.blockSize();
    }

    @Override
    public long capacity() {
        return below.capacity();
    }

    @Override
    public boolean readOnly() {
        return below.readOnly();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        below.read(offset, dst);
    }

    /** @return the device's write, or a future failed with the fence's error once fenced (nothing written) */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            check();
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return below.write(offset, srcs, purpose);
    }

    /** @throws IOException the fence's error once fenced (nothing flushed), else as the device's */
    @Override
    public void flush() throws IOException {
        check();
        below.flush();
    }

    /** @throws IOException the fence's error once fenced (nothing discarded), else as the device's */
    @Override
    public void discard(long offset, long length) throws IOException {
        check();
        below.discard(offset, length);
    }

    @Override
    public DeviceStats stats() {
        return below.stats();
    }

    /** Does nothing: the device below is the caller's. */
    @Override
    public void close() {
    }
}
