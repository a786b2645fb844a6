package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A writable device over a base device that is never written: every write and discard is kept in
 * memory, block by block, and reads see those blocks over the base's; {@link #close()} drops them
 * (the kernel's dm-snapshot with a transient exception store). {@code iomap stat} mounts a
 * read-only image through one: whatever the mount writes (the superblock's mounted flag, a journal
 * replay, the checkpoint at unmount) stays in memory, and the image is not changed.
 *
 * <p>Memory grows with the distinct blocks written or discarded (a discarded block shares one
 * array of zeroes), and is given back at close; meant for the few blocks a mount writes, not for a
 * workload. A write completes before {@code write} returns; a flush has nothing to make durable and
 * only counts. Statistics count what callers asked of this device. The base device is owned: closed
 * by {@link #close()}. Its zones, if any, are not passed through ({@link #zoned()} is empty).
 *
 * <p>Thread-safe: any number of calls may run at once. Concurrent operations on overlapping ranges
 * are not atomic with respect to each other. Bad requests get
 * {@link dev.iomap.device.DeviceRangeException}; after {@link #close()} every read, write, flush and
 * discard fails with {@link IOException}, while the geometry and statistics still answer.
 */
public final class OverlayDevice implements BlockDevice {
    private final BlockDevice base;
    private final int blockSize;
    private final byte[] zeroes;
    /** The blocks written or discarded, by block number: their contents. */
    private final Map<Long, byte[]> blocks = new ConcurrentHashMap<>();
    private final DeviceCounters counters = new DeviceCounters();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** @param base the device to read through to, never written; owned from now on */
    public OverlayDevice(BlockDevice base) {
        this.base = Objects.requireNonNull(base, "base");
        this.blockSize = base.blockSize();
        this.zeroes = new byte[blockSize];
    }

    /** @return the base device's block size */
    @Override
    public int blockSize() {
        return blockSize;
    }

    /** @return the base device's capacity */
    @Override
    public long capacity() {
        return base.capacity();
    }

    /**
     * Reads the blocks written here from memory and the others from the base device, each run of
     * the base's blocks in one read of it.
     */
    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        ensureOpen();
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("read: the destination buffer is read-only");
        }
        int length = dst.remaining();
        DeviceCounters.checkRequest("read", offset, length, blockSize, capacity());
        long first = offset / blockSize;
        int count = length / blockSize;
        int done = 0;
        while (done < count) {
            byte[] written = blocks.get(first + done);
            if (written != null) {
                dst.put(written);
                done++;
                continue;
            }
            int run = 1;
            while (done + run < count && !blocks.containsKey(first + done + run)) {
                run++;
            }
            int bytes = run * blockSize;
            base.read((first + done) * blockSize, dst.slice(dst.position(), bytes));
            dst.position(dst.position() + bytes);
            done += run;
        }
        counters.countRead(length);
    }

    /** Copies the data into memory; the returned future is already complete. Never throws. */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            ensureOpen();
            Objects.requireNonNull(purpose, "purpose");
            List<ByteBuffer> data = srcs.stream().map(ByteBuffer::duplicate).toList();
            long length = DeviceCounters.totalRemaining(data);
            DeviceCounters.checkRequest("write", offset, length, blockSize, capacity());
            long block = offset / blockSize;
            byte[] contents = new byte[blockSize];
            int filled = 0;
            for (ByteBuffer src : data) {
                while (src.hasRemaining()) {
                    int bytes = Math.min(src.remaining(), blockSize - filled);
                    src.get(contents, filled, bytes);
                    filled += bytes;
                    if (filled == blockSize) {
                        blocks.put(block++, contents);
                        contents = new byte[blockSize];
                        filled = 0;
                    }
                }
            }
            counters.countWrite(length, purpose);
            return CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Counts: nothing here is durable, and nothing needs to be. */
    @Override
    public void flush() throws IOException {
        ensureOpen();
        counters.countFlush();
    }

    /** Makes the range read as zeroes, in memory. */
    @Override
    public void discard(long offset, long length) throws IOException {
        ensureOpen();
        DeviceCounters.checkRequest("discard", offset, length, blockSize, capacity());
        for (long block = offset / blockSize; block < (offset + length) / blockSize; block++) {
            blocks.put(block, zeroes);
        }
        counters.countDiscard(length);
    }

    /** @return what callers asked of this device; answers after close too */
    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    /** Drops what was written here and closes the base device. Idempotent. */
    @Override
    public void close() throws IOException {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        blocks.clear();
        base.close();
    }

    /** @return the base device, for messages */
    @Override
    public String toString() {
        return "OverlayDevice[over " + base + "]";
    }

    private void ensureOpen() throws IOException {
        if (closed.get()) {
            throw new IOException(this + " is closed");
        }
    }
}
