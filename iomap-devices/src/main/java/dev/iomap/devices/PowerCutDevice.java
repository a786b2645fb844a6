package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceRangeException;
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
import java.util.concurrent.CompletionException;
import java.util.function.LongConsumer;

/**
 * A RAM device that remembers what was not flushed and can lose it, as a power cut would (in the
 * spirit of Lucene's {@code MockDirectoryWrapper}).
 *
 * <p>Reads see every completed write. {@link #flush()} makes the writes and discards completed before
 * it durable. {@link #image} returns what would be on the platter if power went out now: the durable
 * data plus what the {@link CutMode} keeps of the unflushed writes, chosen with the caller's seeded
 * {@link Random} so that every image reproduces. {@link #cut} does the same and then turns the power
 * off: every later read, write, flush and discard fails with {@link DeviceIoException}.
 * {@link #restart} cuts the power and turns it back on, the device holding the image.
 *
 * <p>Listeners let a test take an image at an exact point of a workload: one set with
 * {@link #onWrite} hears of each completed write, one set with {@link #onFlush} of each flush before
 * it makes anything durable.
 *
 * <p>Thread-safe: one lock, held by every method, so I/O is serialized. Writes complete before
 * {@code write} returns. Requests are checked as {@link RamBlockDevice} checks them: bad ranges get
 * {@link DeviceRangeException} (for a write: as the future's exception). After {@link #close()}
 * every read, write, flush and discard fails with {@link IOException}; {@link #image},
 * {@link #peek}, {@link #poke}, the counters and {@link #stats()} keep working.
 */
public final class PowerCutDevice implements BlockDevice {
    private RamBlockDevice durable;
    private RamBlockDevice live;
    private final List<PendingWrite> pending = new ArrayList<>();
    private final DeviceCounters counters = new DeviceCounters();
    private LongConsumer writeListener = count -> { };
    private LongConsumer flushListener = count -> { };
    private long completedWrites;
    private long flushes;
    private boolean powerOff;
    private boolean closed;

    /**
     * One completed, unflushed write, or a discard.
     *
     * @param data the bytes written, or null for a discard (zeroes)
     */
    private record PendingWrite(long offset, long length, byte[] data) {
    }

    /**
     * @param image the contents at power-on, taken as durable (copied; the argument is not changed
     *     and may be closed)
     */
    public PowerCutDevice(RamBlockDevice image) {
        this.durable = image.copy();
        this.live = image.copy();
    }

    /** @return the image's block size; answers after close too */
    @Override
    public int blockSize() {
        return live.blockSize();
    }

    /** @return the image's capacity; answers after close too */
    @Override
    public long capacity() {
        return live.capacity();
    }

    /**
     * Reads what the completed writes left, flushed or not.
     *
     * @throws DeviceRangeException if the range is not whole blocks inside the device
     * @throws DeviceIoException if the power is off
     * @throws IOException if the device is closed
     */
    @Override
    public synchronized void read(long offset, ByteBuffer dst) throws IOException {
        int length = dst.remaining();
        ensurePowered("read", offset, length);
        live.read(offset, dst);
        counters.countRead(length);
    }

    /**
     * Writes before returning, remembers the write as unflushed, then tells the write listener. Never
     * throws: a bad range, a null argument, the power being off or the device closed is the
     * returned future's exception, and then nothing is remembered or counted.
     *
     * @return an already completed future
     */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            byte[] data = DeviceCounters.gather(srcs);
            synchronized (this) {
                ensurePowered("write", offset, data.length);
                live.write(offset, ByteBuffer.wrap(data), purpose).join();
                pending.add(new PendingWrite(offset, data.length, data));
                counters.countWrite(data.length, purpose);
                completedWrites++;
                writeListener.accept(completedWrites);
            }
            return CompletableFuture.completedFuture(null);
        } catch (CompletionException e) {
            return CompletableFuture.failedFuture(e.getCause());
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Tells the flush listener, then makes every completed write and discard durable.
     *
     * @throws DeviceIoException if the power is off, or the listener turned it off
     * @throws IOException if the device is closed
     */
    @Override
    public synchronized void flush() throws IOException {
        ensurePowered("flush", 0, 0);
        flushes++;
        flushListener.accept(flushes);
        ensurePowered("flush", 0, 0);
        for (PendingWrite write : pending) {
            apply(durable, write, 0, write.length());
        }
        pending.clear();
        counters.countFlush();
    }

    /**
     * Zeroes the range for reads; like a write, the zeroes are not durable before a flush.
     *
     * @throws DeviceRangeException if the range is not whole blocks inside the device
     * @throws DeviceIoException if the power is off
     * @throws IOException if the device is closed
     */
    @Override
    public synchronized void discard(long offset, long length) throws IOException {
        ensurePowered("discard", offset, length);
        live.discard(offset, length);
        pending.add(new PendingWrite(offset, length, null));
        counters.countDiscard(length);
    }

    /** @return what this device was asked to do (its image's own counters are not used) */
    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    /** Fails every later read, write, flush and discard with {@link IOException}. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
    }

    /**
     * @param listener told the number of completed writes after each one, under the device lock (it
     *     may call {@link #image} or {@link #cut}; it must not do I/O on this device); replaces the
     *     previous one
     */
    public synchronized void onWrite(LongConsumer listener) {
        this.writeListener = Objects.requireNonNull(listener, "listener");
    }

    /**
     * @param listener told the number of flushes so far, this one included, when a flush begins and
     *     before it makes anything durable, under the device lock (it may call {@link #image}, or
     *     {@link #cut}, which fails the flush; it must not do I/O on this device); replaces the
     *     previous one
     */
    public synchronized void onFlush(LongConsumer listener) {
        this.flushListener = Objects.requireNonNull(listener, "listener");
    }

    /** @return writes completed so far */
    public synchronized long completedWrites() {
        return completedWrites;
    }

    /** @return completed writes and discards not yet made durable by a flush */
    public synchronized int unflushedWrites() {
        return pending.size();
    }

    /**
     * What would survive a power cut now; the device keeps running. Works after close.
     *
     * @param mode what to keep of unflushed writes
     * @param random makes every choice of {@code mode}; may be null for {@link CutMode#LOSE_UNFLUSHED}
     * @return a new, open device holding the image
     */
    public synchronized RamBlockDevice image(CutMode mode, Random random) {
        if (mode != CutMode.LOSE_UNFLUSHED) {
            Objects.requireNonNull(random, "random");
        }
        RamBlockDevice image = durable.copy();
        switch (mode) {
            case LOSE_UNFLUSHED -> { }
            case LOSE_SOME_WRITES -> loseSomeWrites(image, random);
            case LOSE_SOME_BLOCKS -> loseSomeBlocks(image, random);
            case TEAR_AND_REORDER -> tearAndReorder(image, random);
        }
        return image;
    }

    /**
     * Cuts the power: returns what survives (as {@link #image}) and fails every later I/O.
     *
     * @param mode what to keep of unflushed writes
     * @param random makes every choice of {@code mode}; may be null for {@link CutMode#LOSE_UNFLUSHED}
     * @return a new, open device holding the image
     */
    public synchronized RamBlockDevice cut(CutMode mode, Random random) {
        RamBlockDevice image = image(mode, random);
        powerOff = true;
        return image;
    }

    /**
     * Cuts the power and turns it back on: from now on the device holds what {@link #image} returns,
     * nothing is unflushed, and I/O works again (after {@link #cut} too). Counters and listeners stay;
     * a closed device stays closed.
     *
     * @param mode what to keep of unflushed writes
     * @param random makes every choice of {@code mode}; may be null for {@link CutMode#LOSE_UNFLUSHED}
     */
    public synchronized void restart(CutMode mode, Random random) {
        RamBlockDevice image = image(mode, random);
        live = image.copy();
        durable = image;
        pending.clear();
        powerOff = false;
    }

    /** @return whether the power is off: {@link #cut} was called, and no {@link #restart} since */
    public synchronized boolean isPowerOff() {
        return powerOff;
    }

    /**
     * Reads what reads see, as {@link RamBlockDevice#peek}: without counting, alignment rules or the
     * power and open checks.
     *
     * @param offset device byte offset
     * @param length bytes
     * @return the bytes
     * @throws DeviceRangeException if the range is negative or not inside the device
     */
    public synchronized byte[] peek(long offset, int length) throws DeviceRangeException {
        return live.peek(offset, length);
    }

    /**
     * Damages the medium: changes what reads see and what the durable data hold, at once, without
     * counting, alignment rules or the power and open checks. Unflushed writes over the range still
     * land on it in an image.
     *
     * @param offset device byte offset
     * @param data the bytes
     * @param from first index in {@code data}
     * @param length bytes
     * @throws DeviceRangeException if the device range is negative or not inside the device
     * @throws IndexOutOfBoundsException if {@code [from, from + length)} is not inside {@code data}
     */
    public synchronized void poke(long offset, byte[] data, int from, int length) throws DeviceRangeException {
        live.poke(offset, data, from, length);
        durable.poke(offset, data, from, length);
    }

    /** Keeps each write whole with a probability drawn for this image, in write order. */
    private void loseSomeWrites(RamBlockDevice image, Random random) {
        double keep = random.nextDouble();
        for (PendingWrite write : pending) {
            if (random.nextDouble() < keep) {
                apply(image, write, 0, write.length());
            }
        }
    }

    /** Keeps each block of each write with even odds, in write order. */
    private void loseSomeBlocks(RamBlockDevice image, Random random) {
        for (PendingWrite write : pending) {
            tear(image, write, random);
        }
    }

    /** In random order, half the writes lost, a quarter kept whole, a quarter torn by block. */
    private void tearAndReorder(RamBlockDevice image, Random random) {
        List<PendingWrite> order = new ArrayList<>(pending);
        Collections.shuffle(order, random);
        for (PendingWrite write : order) {
            int choice = random.nextInt(4);
            if (choice < 2) {
                continue;
            }
            if (choice == 2) {
                apply(image, write, 0, write.length());
                continue;
            }
            tear(image, write, random);
        }
    }

    /** Lands each device block of a pending write on {@code image} with even odds. */
    private void tear(RamBlockDevice image, PendingWrite write, Random random) {
        int block = live.blockSize();
        for (long at = 0; at < write.length(); at += block) {
            if (random.nextBoolean()) {
                apply(image, write, at, block);
            }
        }
    }

    /** Lands bytes {@code [from, from + length)} of a pending write (or discard) on {@code target}. */
    private static void apply(RamBlockDevice target, PendingWrite write, long from, long length) {
        if (write.data() == null) {
            target.zero(write.offset() + from, length);
        } else {
            target.store(write.offset() + from, write.data(), (int) from, (int) length);
        }
    }

    private void ensurePowered(String operation, long offset, long length) throws IOException {
        if (closed) {
            throw new IOException("power-cut device is closed");
        }
        if (powerOff) {
            throw new DeviceIoException(operation + " after power cut", offset, length, null);
        }
    }
}
