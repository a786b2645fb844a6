package dev.iomap.adapter.support;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceStats;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * A byte[]-backed device for tests that remembers what was not flushed and can lose it: the
 * current image (what reads see) and the durable image (what survives a {@link #powerCut()}), plus
 * the writes made since the last flush, in order.
 *
 * <p>Writes complete before {@code write} returns. {@link #powerCut()} drops every unflushed write;
 * {@link #powerCut(Random)} keeps each unflushed block with probability one half (a device that
 * reorders and tears at block granularity). Faults can be injected into writes and flushes. Every
 * method is synchronized; small devices only (the images are arrays).
 */
final class MemoryBlockDevice implements BlockDevice {
    private final int blockSize;
    private byte[] current;
    private final byte[] durable;
    private final List<PendingWrite> unflushed = new ArrayList<>();
    private long bytesRead;
    private long reads;
    private long dataBytesWritten;
    private long metadataBytesWritten;
    private long writes;
    private long flushes;
    private long discardedBytes;
    private int writesBeforeFailure = -1;
    private int flushesBeforeFailure = -1;
    private boolean closed;

    /** One write not yet flushed. */
    record PendingWrite(long offset, byte[] data) {
    }

    MemoryBlockDevice(int blockSize, int blocks) {
        this.blockSize = blockSize;
        this.current = new byte[Math.multiplyExact(blockSize, blocks)];
        this.durable = current.clone();
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public long capacity() {
        return current.length;
    }

    @Override
    public synchronized void read(long offset, ByteBuffer dst) throws IOException {
        ensureOpen();
        int length = dst.remaining();
        check("read", offset, length);
        dst.put(current, (int) offset, length);
        reads++;
        bytesRead += length;
    }

    @Override
    public synchronized CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            ensureOpen();
            int length = 0;
            for (ByteBuffer src : srcs) {
                length = Math.addExact(length, src.remaining());
            }
            check("write", offset, length);
            if (writesBeforeFailure == 0) {
                throw new DeviceIoException("injected write failure", offset, length, null);
            }
            if (writesBeforeFailure > 0) {
                writesBeforeFailure--;
            }
            byte[] data = new byte[length];
            int at = 0;
            for (ByteBuffer src : srcs) {
                int n = src.remaining();
                src.get(src.position(), data, at, n);
                at += n;
            }
            System.arraycopy(data, 0, current, (int) offset, length);
            unflushed.add(new PendingWrite(offset, data));
            writes++;
            if (purpose == IoPurpose.DATA) {
                dataBytesWritten += length;
            } else {
                metadataBytesWritten += length;
            }
            return CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        ensureOpen();
        if (flushesBeforeFailure == 0) {
            throw new DeviceIoException("injected flush failure", 0, 0, null);
        }
        if (flushesBeforeFailure > 0) {
            flushesBeforeFailure--;
        }
        for (PendingWrite write : unflushed) {
            System.arraycopy(write.data(), 0, durable, (int) write.offset(), write.data().length);
        }
        unflushed.clear();
        flushes++;
    }

    @Override
    public synchronized void discard(long offset, long length) throws IOException {
        ensureOpen();
        check("discard", offset, length);
        byte[] zeroes = new byte[(int) length];
        System.arraycopy(zeroes, 0, current, (int) offset, zeroes.length);
        unflushed.add(new PendingWrite(offset, zeroes));
        discardedBytes += length;
    }

    @Override
    public synchronized DeviceStats stats() {
        return new DeviceStats(bytesRead, reads, dataBytesWritten, metadataBytesWritten, writes, flushes,
                discardedBytes);
    }

    @Override
    public synchronized void close() {
        closed = true;
    }

    /** Loses every write not flushed: the current image becomes the durable one. */
    synchronized void powerCut() {
        unflushed.clear();
        current = durable.clone();
    }

    /**
     * Loses some unflushed writes: each block of each unflushed write reaches the durable image with
     * probability one half, in write order; then the current image becomes the durable one.
     *
     * @return how many unflushed blocks survived
     */
    synchronized int powerCut(Random random) {
        int survived = 0;
        for (PendingWrite write : unflushed) {
            for (int at = 0; at < write.data().length; at += blockSize) {
                if (random.nextBoolean()) {
                    System.arraycopy(write.data(), at, durable, (int) write.offset() + at, blockSize);
                    survived++;
                }
            }
        }
        unflushed.clear();
        current = durable.clone();
        return survived;
    }

    /** @return the writes since the last flush, in order */
    synchronized List<PendingWrite> unflushed() {
        return List.copyOf(unflushed);
    }

    /**
     * @param count writes that still succeed; the ones after fail with {@link DeviceIoException};
     *     negative for no failures
     */
    synchronized void failWritesAfter(int count) {
        writesBeforeFailure = count;
    }

    /**
     * @param count flushes that still succeed; the ones after fail with {@link DeviceIoException} and
     *     make nothing durable; negative for no failures
     */
    synchronized void failFlushesAfter(int count) {
        flushesBeforeFailure = count;
    }

    /** @return a copy of block {@code blockNo} as reads see it */
    synchronized byte[] block(long blockNo) {
        int from = Math.toIntExact(blockNo * blockSize);
        return Arrays.copyOfRange(current, from, from + blockSize);
    }

    /** @return a copy of block {@code blockNo} as a power cut would leave it */
    synchronized byte[] durableBlock(long blockNo) {
        int from = Math.toIntExact(blockNo * blockSize);
        return Arrays.copyOfRange(durable, from, from + blockSize);
    }

    /** Overwrites bytes in both images at once, as damage on the medium would. */
    synchronized void damage(long offset, byte[] bytes) {
        System.arraycopy(bytes, 0, current, Math.toIntExact(offset), bytes.length);
        System.arraycopy(bytes, 0, durable, Math.toIntExact(offset), bytes.length);
    }

    private void check(String what, long offset, long length) throws InvalidRangeException {
        if (offset < 0 || length < 0 || offset % blockSize != 0 || length % blockSize != 0
                || offset + length > current.length) {
            throw new InvalidRangeException(what + ": [" + offset + ", +" + length + ") is not whole blocks inside "
                    + current.length + " bytes");
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("device closed");
        }
    }
}
