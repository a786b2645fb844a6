package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A zero-filled block device on the Java heap, stored sparsely in 64 KiB chunks so that a large,
 * mostly empty device costs little, and copied cheaply with {@link #copy()} to take an image.
 *
 * <p>Thread-safe (one lock per device). A write is complete, and durable, when {@code write} returns;
 * the returned future is already done. Reads of never-written ranges return zeroes; discard zeroes.
 * After {@link #close()} every I/O fails with {@link IOException}; {@link #blockSize()},
 * {@link #capacity()}, {@link #stats()}, {@link #copy()} and {@link #peek} keep working, so a test can
 * still look at the image of a device the filesystem has closed.
 */
public final class MemoryBlockDevice implements BlockDevice {
    private static final int CHUNK_SHIFT = 16;
    private static final int CHUNK_SIZE = 1 << CHUNK_SHIFT;

    private final int blockSize;
    private final long capacity;
    private final byte[][] chunks;
    private final DeviceCounters counters = new DeviceCounters();
    private boolean closed;

    /**
     * @param blockSize the logical block size: a power of two from 512 to 64 KiB
     * @param capacity bytes: a positive multiple of {@code blockSize}, at most 128 GiB
     * @throws IllegalArgumentException if a value is out of range
     */
    public MemoryBlockDevice(int blockSize, long capacity) {
        if (Integer.bitCount(blockSize) != 1 || blockSize < 512 || blockSize > CHUNK_SIZE) {
            throw new IllegalArgumentException("blockSize must be a power of two from 512 to 65536, got " + blockSize);
        }
        if (capacity <= 0 || capacity % blockSize != 0 || (capacity >> CHUNK_SHIFT) >= Integer.MAX_VALUE / 2) {
            throw new IllegalArgumentException("capacity must be a positive multiple of " + blockSize
                    + " and at most 128 GiB, got " + capacity);
        }
        this.blockSize = blockSize;
        this.capacity = capacity;
        this.chunks = new byte[(int) ((capacity + CHUNK_SIZE - 1) >> CHUNK_SHIFT)][];
    }

    private MemoryBlockDevice(MemoryBlockDevice original) {
        this.blockSize = original.blockSize;
        this.capacity = original.capacity;
        this.chunks = new byte[original.chunks.length][];
        for (int i = 0; i < chunks.length; i++) {
            byte[] chunk = original.chunks[i];
            chunks[i] = chunk == null ? null : chunk.clone();
        }
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public long capacity() {
        return capacity;
    }

    @Override
    public synchronized void read(long offset, ByteBuffer dst) throws IOException {
        ensureOpen();
        int length = dst.remaining();
        DeviceCounters.checkRequest("read", offset, length, blockSize, capacity);
        byte[] bytes = new byte[length];
        copyOut(offset, bytes, 0, length);
        dst.put(bytes);
        counters.countRead(length);
    }

    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            Objects.requireNonNull(purpose, "purpose");
            byte[] data = DeviceCounters.gather(srcs);
            synchronized (this) {
                ensureOpen();
                DeviceCounters.checkRequest("write", offset, data.length, blockSize, capacity);
                copyIn(offset, data, 0, data.length);
                counters.countWrite(data.length, purpose);
            }
            return CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        ensureOpen();
        counters.countFlush();
    }

    @Override
    public synchronized void discard(long offset, long length) throws IOException {
        ensureOpen();
        DeviceCounters.checkRequest("discard", offset, length, blockSize, capacity);
        zero(offset, length);
        counters.countDiscard(length);
    }

    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    /** Closes the device; its contents stay readable through {@link #peek} and {@link #copy()}. */
    @Override
    public synchronized void close() {
        closed = true;
    }

    /** @return whether {@link #close()} was called */
    public synchronized boolean isClosed() {
        return closed;
    }

    /**
     * An independent, open copy of the contents (an image), with fresh counters. Works after close.
     *
     * @return the copy
     */
    public synchronized MemoryBlockDevice copy() {
        return new MemoryBlockDevice(this);
    }

    /**
     * Reads bytes without counting, alignment rules or the open check: for tests that inspect an image.
     *
     * @param offset device byte offset
     * @param length bytes
     * @return the bytes
     * @throws IllegalArgumentException if the range is outside the device
     */
    public synchronized byte[] peek(long offset, int length) {
        if (offset < 0 || length < 0 || offset + length > capacity) {
            throw new IllegalArgumentException("peek [" + offset + ", +" + length + ") is outside the device");
        }
        byte[] bytes = new byte[length];
        copyOut(offset, bytes, 0, length);
        return bytes;
    }

    /**
     * Writes bytes without counting, alignment rules or the open check (a test corrupting an image, a
     * power-cut image being assembled).
     *
     * @param offset device byte offset
     * @param data the bytes
     * @param from first index in {@code data}
     * @param length bytes
     * @throws IllegalArgumentException if the range is outside the device
     */
    public synchronized void poke(long offset, byte[] data, int from, int length) {
        if (offset < 0 || length < 0 || offset + length > capacity) {
            throw new IllegalArgumentException("poke [" + offset + ", +" + length + ") is outside the device");
        }
        copyIn(offset, data, from, length);
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("memory block device is closed");
        }
    }

    private void copyOut(long offset, byte[] dst, int at, int length) {
        while (length > 0) {
            int index = (int) (offset >> CHUNK_SHIFT);
            int inChunk = (int) (offset & (CHUNK_SIZE - 1));
            int n = Math.min(length, CHUNK_SIZE - inChunk);
            byte[] chunk = chunks[index];
            if (chunk == null) {
                java.util.Arrays.fill(dst, at, at + n, (byte) 0);
            } else {
                System.arraycopy(chunk, inChunk, dst, at, n);
            }
            offset += n;
            at += n;
            length -= n;
        }
    }

    private void copyIn(long offset, byte[] src, int at, int length) {
        while (length > 0) {
            int index = (int) (offset >> CHUNK_SHIFT);
            int inChunk = (int) (offset & (CHUNK_SIZE - 1));
            int n = Math.min(length, CHUNK_SIZE - inChunk);
            byte[] chunk = chunks[index];
            if (chunk == null) {
                chunk = new byte[CHUNK_SIZE];
                chunks[index] = chunk;
            }
            System.arraycopy(src, at, chunk, inChunk, n);
            offset += n;
            at += n;
            length -= n;
        }
    }

    private void zero(long offset, long length) {
        while (length > 0) {
            int index = (int) (offset >> CHUNK_SHIFT);
            int inChunk = (int) (offset & (CHUNK_SIZE - 1));
            int n = (int) Math.min(length, CHUNK_SIZE - inChunk);
            byte[] chunk = chunks[index];
            if (chunk != null) {
                java.util.Arrays.fill(chunk, inChunk, inChunk + n, (byte) 0);
            }
            offset += n;
            length -= n;
        }
    }
}
