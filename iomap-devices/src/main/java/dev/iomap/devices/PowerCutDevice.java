package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;

/**
 * A device that remembers what was not flushed and can lose it, as a power cut would (in the spirit
 * of Lucene's {@code MockDirectoryWrapper}).
 *
 * <p>Reads see every completed write. {@link #flush()} makes the writes completed before it durable.
 * {@link #image} returns what would be on the platter if power went out now: the durable data plus,
 * in {@link CutMode#TEAR_AND_REORDER}, a random subset of the unflushed writes (chosen with the
 * caller's seeded {@link Random}, so every image reproduces). {@link #cut} does the same and then
 * turns the power off: every later I/O fails with {@link DeviceIoException}.
 *
 * <p>Thread-safe (one lock). Writes complete synchronously. A listener set with {@link #onWrite} is
 * told the running write count after each completed write, under the device lock, so it can take an
 * image at an exact point of a workload.
 */
public final class PowerCutDevice implements BlockDevice {
    private final RamBlockDevice durable;
    private final RamBlockDevice live;
    private final List<PendingWrite> pending = new ArrayList<>();
    private final DeviceCounters counters = new DeviceCounters();
    private LongConsumer writeListener = count -> { };
    private long completedWrites;
    private boolean powerOff;
    private boolean closed;

    /** One completed, unflushed write. */
    private record PendingWrite(long offset, byte[] data) {
    }

    /**
     * @param image the contents at power-on, taken as durable (copied; the argument is not changed)
     */
    public PowerCutDevice(RamBlockDevice image) {
        this.durable = image.copy();
        this.live = image.copy();
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
    public synchronized void read(long offset, ByteBuffer dst) throws IOException {
        ensurePowered("read", offset, dst.remaining());
        int length = dst.remaining();
        live.read(offset, dst);
        counters.countRead(length);
    }

    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            Objects.requireNonNull(purpose, "purpose");
            byte[] data = DeviceCounters.gather(srcs);
            synchronized (this) {
                ensurePowered("write", offset, data.length);
                live.write(offset, ByteBuffer.wrap(data), purpose).join();
                pending.add(new PendingWrite(offset, data));
                counters.countWrite(data.length, purpose);
                completedWrites++;
                writeListener.accept(completedWrites);
            }
            return CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                    ? e.getCause() : e;
            return CompletableFuture.failedFuture(cause);
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        ensurePowered("flush", 0, 0);
        for (PendingWrite write : pending) {
            durable.store(write.offset(), write.data(), 0, write.data().length);
        }
        pending.clear();
        counters.countFlush();
    }

    @Override
    public synchronized void discard(long offset, long length) throws IOException {
        ensurePowered("discard", offset, length);
        live.discard(offset, length);
        // A discard is not durable before a flush either; model it as a pending write of zeroes.
        for (long at = offset; at < offset + length; at += 1 << 20) {
            int n = (int) Math.min(1 << 20, offset + length - at);
            pending.add(new PendingWrite(at, new byte[n]));
        }
        counters.countDiscard(length);
    }

    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    @Override
    public synchronized void close() {
        closed = true;
    }

    /**
     * @param listener told the number of completed writes after each one, under the device lock (it
     *     may call {@link #image}; it must not do I/O on this device)
     */
    public synchronized void onWrite(LongConsumer listener) {
        this.writeListener = Objects.requireNonNull(listener, "listener");
    }

    /** @return writes completed so far */
    public synchronized long completedWrites() {
        return completedWrites;
    }

    /** @return completed writes not yet made durable by a flush */
    public synchronized int unflushedWrites() {
        return pending.size();
    }

    /**
     * What would survive a power cut now; the device keeps running.
     *
     * @param mode what to keep of unflushed writes
     * @param random chooses the kept, torn and reordered writes
     * @return a new device holding the image
     */
    public synchronized RamBlockDevice image(CutMode mode, Random random) {
        RamBlockDevice image = durable.copy();
        if (mode == CutMode.LOSE_UNFLUSHED) {
            return image;
        }
        List<PendingWrite> order = new ArrayList<>(pending);
        Collections.shuffle(order, random);
        for (PendingWrite write : order) {
            int choice = random.nextInt(4);
            if (choice < 2) {
                continue;
            }
            byte[] data = write.data();
            if (choice == 2) {
                image.store(write.offset(), data, 0, data.length);
                continue;
            }
            int sector = live.blockSize();
            for (int at = 0; at < data.length; at += sector) {
                if (random.nextBoolean()) {
                    image.store(write.offset() + at, data, at, Math.min(sector, data.length - at));
                }
            }
        }
        return image;
    }

    /**
     * Cuts the power: returns what survives (as {@link #image}) and fails every later I/O.
     *
     * @param mode what to keep of unflushed writes
     * @param random chooses the kept, torn and reordered writes
     * @return a new device holding the image
     */
    public synchronized RamBlockDevice cut(CutMode mode, Random random) {
        RamBlockDevice image = image(mode, random);
        powerOff = true;
        return image;
    }

    /** @return whether {@link #cut} was called */
    public synchronized boolean isPowerOff() {
        return powerOff;
    }

    private void ensurePowered(String what, long offset, long length) throws IOException {
        if (closed) {
            throw new IOException("power-cut device is closed");
        }
        if (powerOff) {
            throw new DeviceIoException(what + " after power cut", offset, length, null);
        }
    }
}
