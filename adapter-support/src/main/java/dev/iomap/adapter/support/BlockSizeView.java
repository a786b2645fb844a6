package dev.iomap.adapter.support;

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
 *
 * <p>Use it whenever an adapter's block size may exceed the device's (the test kit's devices have
 * 512-byte sectors): open the device through {@link #of} before handing it to {@link Journal},
 * {@link BlockIo} or anything else that numbers blocks in {@link BlockDevice#blockSize()} units.
 */
public final class BlockSizeView implements BlockDevice {
    private final BlockDevice device;
    private final int blockSize;

    private BlockSizeView(BlockDevice device, int blockSize) {
        this.device = device;
        this.blockSize = blockSize;
    }

    /**
     * @param device the device, which stays the caller's to close
     * @param blockSize the filesystem block size: a power of two, a multiple of the device's
     * @return the device itself if its blocks are that size, else a view in {@code blockSize} blocks
     * @throws IllegalArgumentException if {@code blockSize} is not a power of two or smaller than the
     *     device's block size
     */
    public static BlockDevice of(BlockDevice device, int blockSize) {
        if (Integer.bitCount(blockSize) != 1 || blockSize < device.blockSize()) {
            throw new IllegalArgumentException("a view of " + device + " needs blocks of a power of two of at least "
                    + device.blockSize() + " bytes, not " + blockSize);
        }
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
