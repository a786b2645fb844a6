package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A read-only look at another device, in blocks as large as or larger than the other's, which it
 * does not own: {@link #close()} leaves the other device open. {@link ZonedDevice#probe} shows a
 * zoned image through it to a caller holding the image with another block size.
 *
 * <p>Reads of whole blocks of this view inside its capacity (the other's, rounded down to whole
 * blocks) are reads of the other device; writes and discards fail with
 * {@link ReadOnlyDeviceException}; a flush only counts. Thread-safe as the other device.
 */
final class ReadOnlyView implements BlockDevice {
    private final BlockDevice device;
    private final int blockSize;
    private final long capacity;
    private final DeviceCounters counters = new DeviceCounters();
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param device the device to look at, not owned
     * @param blockSize a power of two, a multiple of {@code device}'s block size
     */
    ReadOnlyView(BlockDevice device, int blockSize) {
        if (blockSize < device.blockSize() || Integer.bitCount(blockSize) != 1) {
            throw new IllegalArgumentException("a view of " + device + " needs blocks of a power of two of at"
                    + " least " + device.blockSize() + " bytes, not " + blockSize);
        }
        this.device = device;
        this.blockSize = blockSize;
        this.capacity = device.capacity() - device.capacity() % blockSize;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public long capacity() {
        return capacity;
    }

    /** @return true */
    @Override
    public boolean readOnly() {
        return true;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        ensureOpen();
        DeviceCounters.checkRequest("read", offset, dst.remaining(), blockSize, capacity);
        int length = dst.remaining();
        device.read(offset, dst);
        counters.countRead(length);
    }

    /** @return a future failed with {@link ReadOnlyDeviceException} (or the closed device's error) */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            ensureOpen();
            throw refused("write to");
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Counts: nothing was written. */
    @Override
    public void flush() throws IOException {
        ensureOpen();
        counters.countFlush();
    }

    /** @throws ReadOnlyDeviceException always */
    @Override
    public void discard(long offset, long length) throws IOException {
        ensureOpen();
        throw refused("discard in");
    }

    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    /** Closes the view only: the device it looks at stays open. */
    @Override
    public void close() {
        closed.set(true);
    }

    @Override
    public String toString() {
        return "read-only view in " + blockSize + "-byte blocks of " + device;
    }

    private ReadOnlyDeviceException refused(String operation) {
        return new ReadOnlyDeviceException(operation + " " + this + " refused: the view is read-only");
    }

    private void ensureOpen() throws IOException {
        if (closed.get()) {
            throw new IOException(this + " is closed");
        }
    }
}
