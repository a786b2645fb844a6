package dev.iomap.adapter.xfs;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * A RAM device with a volatile write cache: writes since the last flush are pending, and a power cut
 * keeps the flushed state plus any subset of the pending writes (each whole or not at all, in order),
 * as a disk that reorders its cache may. Thread-safe.
 */
final class PowerCutDevice implements BlockDevice {
    private final RamBlockDevice live;
    private final RamBlockDevice durable;
    private final List<Pending> pending = new ArrayList<>();
    private int flushesUntilCut = -1;
    private Random cutRandom;
    private RamBlockDevice captured;

    private record Pending(long offset, byte[] data) {
    }

    PowerCutDevice(int blockSize, long capacity) {
        live = new RamBlockDevice(blockSize, capacity);
        durable = new RamBlockDevice(blockSize, capacity);
    }

    @Override
    public int blockSize() {
        return live.blockSize();
    }

    @Override
    public long capacity() {
        return live.capacity();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        live.read(offset, dst);
    }

    @Override
    public synchronized CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        int total = 0;
        for (ByteBuffer src : srcs) {
            total += src.remaining();
        }
        byte[] data = new byte[total];
        int at = 0;
        for (ByteBuffer src : srcs) {
            int n = src.remaining();
            src.duplicate().get(data, at, n);
            at += n;
        }
        CompletableFuture<Void> done = live.write(offset, srcs, purpose);
        if (!done.isCompletedExceptionally()) {
            pending.add(new Pending(offset, data));
        }
        return done;
    }

    /**
     * Arranges a power cut inside the {@code flushes}-th flush from now, before it takes effect: the image
     * it leaves is kept for {@link #takeCapturedImage()}, and the device goes on as if nothing happened.
     */
    synchronized void cutAtFlush(int flushes, Random random) {
        flushesUntilCut = flushes;
        cutRandom = random;
    }

    /** @return the image of the arranged power cut if it happened, else null; either way, disarms it */
    synchronized RamBlockDevice takeCapturedImage() {
        RamBlockDevice image = captured;
        captured = null;
        flushesUntilCut = -1;
        return image;
    }

    @Override
    public synchronized void flush() throws IOException {
        if (flushesUntilCut > 0 && --flushesUntilCut == 0) {
            captured = crashImage(cutRandom, cutRandom.nextDouble());
        }
        for (Pending write : pending) {
            durable.write(write.offset(), ByteBuffer.wrap(write.data()), IoPurpose.DATA).join();
        }
        pending.clear();
        live.flush();
    }

    @Override
    public synchronized void discard(long offset, long length) throws IOException {
        live.discard(offset, length);
        pending.add(new Pending(offset, new byte[Math.toIntExact(length)]));
    }

    @Override
    public DeviceStats stats() {
        return live.stats();
    }

    /**
     * @param random chooses which pending writes survive
     * @param keep the chance that each pending write survives
     * @return a new device holding what a power cut now could leave
     */
    synchronized RamBlockDevice crashImage(Random random, double keep) throws IOException {
        RamBlockDevice image = new RamBlockDevice(blockSize(), capacity());
        long chunk = 4L << 20;
        for (long offset = 0; offset < capacity(); offset += chunk) {
            ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(chunk, capacity() - offset));
            durable.read(offset, buffer);
            image.write(offset, buffer.flip(), IoPurpose.DATA).join();
        }
        for (Pending write : pending) {
            if (random.nextDouble() < keep) {
                image.write(write.offset(), ByteBuffer.wrap(write.data()), IoPurpose.DATA).join();
            }
        }
        return image;
    }

    @Override
    public void close() {
        live.close();
        durable.close();
    }
}
