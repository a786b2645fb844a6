package dev.iomap.adapter.gfs2;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A device that reads through to another and keeps its own writes in memory, block by block, so
 * fsck can replay journals without changing the image. Writes must be whole, aligned blocks.
 * Thread-safe (synchronised).
 */
final class ScratchOverlay implements BlockDevice {
    private final BlockDevice below;
    private final Map<Long, byte[]> written = new HashMap<>();

    ScratchOverlay(BlockDevice below) {
        this.below = below;
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
    public synchronized void read(long offset, ByteBuffer dst) throws IOException {
        int bs = blockSize();
        while (dst.hasRemaining()) {
            long block = offset / bs;
            byte[] mine = written.get(block);
            int n = Math.min(dst.remaining(), bs);
            if (mine != null) {
                dst.put(mine, 0, n);
            } else {
                ByteBuffer part = dst.slice().limit(n);
                below.read(offset, part);
                dst.position(dst.position() + n);
            }
            offset += n;
        }
    }

    @Override
    public synchronized CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        int bs = blockSize();
        long at = offset;
        for (ByteBuffer src : srcs) {
            ByteBuffer b = src.duplicate();
            while (b.hasRemaining()) {
                byte[] block = new byte[bs];
                b.get(block, 0, Math.min(bs, b.remaining()));
                written.put(at / bs, block);
                at += bs;
            }
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void flush() {
    }

    @Override
    public void discard(long offset, long length) {
    }

    @Override
    public DeviceStats stats() {
        return DeviceStats.ZERO;
    }

    @Override
    public void close() {
    }
}
