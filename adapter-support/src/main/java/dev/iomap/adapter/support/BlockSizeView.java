package dev.iomap.adapter.xfs;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A device seen in filesystem blocks larger than its own (4 KiB blocks on a 512-byte-sector device), so
 * that adapter-support's block-numbered structures (metadata blocks, the journal) work in filesystem
 * blocks. Every request is delegated unchanged: a range aligned to the larger block is aligned to the
 * smaller one. The capacity is rounded down to whole filesystem blocks. Closing the view does not close
 * the device. Thread-safe as the device is.
 */
final class BlockSizeView implements BlockDevice {
    private final BlockDevice device;
    private final int blockSize;

    private BlockSizeView(BlockDevice device, int blockSize) {
        this.device = device;
        this.blockSize = blockSize;
    }

    /**
     * @param device the device
     * @param blockSize the filesystem block size: a power of two, at least the device's
     * @return the device itself if its blocks are that size, else a view
     */
    static BlockDevice of(BlockDevice device, int blockSize) {
        return blockSize == device.blockSize() ? device : new BlockSizeView(device, blockSize);
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public long capacity() {
        return device.capacity() / blockSize * blockSize;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        device.read(offset, dst);
    }

    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        return device.write(offset, srcs, purpose);
    }

    @Override
    public void flush() throws IOException {
        device.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        device.discard(offset, length);
    }

    @Override
    public boolean readOnly() {
        return device.readOnly();
    }

    @Override
    public DeviceStats stats() {
        return device.stats();
    }

    @Override
    public void close() {
        // The device belongs to whoever opened it.
    }

    @Override
    public String toString() {
        return device + " in " + blockSize + "-byte blocks";
    }
}
