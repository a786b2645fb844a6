package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A block device in off-heap memory, zero-filled when created and lost when closed.
 *
 * <p>The memory is split into chunks (64 MiB by default) so that a device may be larger than one
 * {@link ByteBuffer} can address. A chunk is allocated the first time something is written to it;
 * reading a chunk never written returns zeroes without allocating it. If the machine has no memory
 * for a chunk, the write that needed it fails with {@link DeviceIoException}.
 *
 * <p>Thread-safe: reads, writes and discards run in the calling thread without a device-wide lock,
 * so any number may run at once. Concurrent operations on overlapping ranges are not atomic with
 * respect to each other (a read racing a write may see part of it), as on a real disk.
 *
 * <p>A write is complete when {@code write} returns: the future it returns is already completed,
 * normally or exceptionally; {@code write} itself never throws. The caller's buffers are read from
 * their position to their limit and their positions are left unchanged. {@link #flush()} has nothing
 * to do (the device is as durable as it will ever be) but is counted.
 *
 * <p>Bad requests (negative, unaligned, overflowing or past the end) get
 * {@link dev.iomap.api.DeviceRangeException}; see {@link DeviceCounters#checkRequest}. Null
 * arguments get {@link NullPointerException} (for a write: as the future's exception).
 *
 * <p>{@link #close()} frees the memory at once. After it, every read, write, flush and discard fails
 * with {@link IOException} (for a write: as the future's exception); {@link #blockSize()},
 * {@link #capacity()} and {@link #stats()} still answer.
 */
public final class RamBlockDevice implements BlockDevice {
    /** Bytes per chunk unless a test asks for smaller ones. */
    static final long DEFAULT_CHUNK_SIZE = 64L << 20;

    /** Put in every slot by {@link #close()}, so that a chunk allocated after it is not leaked. */
    private static final Chunk RELEASED = new Chunk(null, MemorySegment.NULL);

    private final int blockSize;
    private final long capacity;
    private final long chunkSize;
    private final int chunkShift;
    private final AtomicReferenceArray<Chunk> chunks;
    private final DeviceCounters counters = new DeviceCounters();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** One chunk of device memory and the arena that frees it. */
    private record Chunk(Arena arena, MemorySegment memory) {
    }

    /**
     * Creates a zero-filled device.
     *
     * @param blockSize a power of two, at least 512
     * @param capacity bytes, a positive multiple of {@code blockSize}
     * @throws IllegalArgumentException if either value is not allowed
     */
    public RamBlockDevice(int blockSize, long capacity) {
        this(blockSize, capacity, DEFAULT_CHUNK_SIZE);
    }

    /**
     * Creates a zero-filled device with chunks of the given size, so that tests can cross chunk
     * boundaries with small devices.
     *
     * @param blockSize a power of two, at least 512
     * @param capacity bytes, a positive multiple of {@code blockSize}
     * @param chunkSize bytes per chunk, a power of two, at least {@code blockSize}
     * @throws IllegalArgumentException if a value is not allowed or the device needs more than
     *     {@code Integer.MAX_VALUE} chunks
     */
    RamBlockDevice(int blockSize, long capacity, long chunkSize) {
        DeviceCounters.checkGeometry(blockSize, capacity);
        if (chunkSize < blockSize || Long.bitCount(chunkSize) != 1) {
            throw new IllegalArgumentException("chunk size " + chunkSize
                    + " is not a power of two of at least the block size " + blockSize);
        }
        long chunkCount = Math.ceilDiv(capacity, chunkSize);
        if (chunkCount > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("capacity " + capacity + " needs " + chunkCount
                    + " chunks of " + chunkSize + " bytes; use larger chunks");
        }
        this.blockSize = blockSize;
        this.capacity = capacity;
        this.chunkSize = chunkSize;
        this.chunkShift = Long.numberOfTrailingZeros(chunkSize);
        this.chunks = new AtomicReferenceArray<>((int) chunkCount);
    }

    /** @return the block size given at construction; answers after close too */
    @Override
    public int blockSize() {
        return blockSize;
    }

    /** @return the capacity given at construction; answers after close too */
    @Override
    public long capacity() {
        return capacity;
    }

    /**
     * Copies {@code dst.remaining()} bytes at {@code offset} into {@code dst} and moves its position to
     * its limit. On an exception {@code dst}'s position is unchanged (its content may not be).
     *
     * @param offset device byte offset, block aligned
     * @param dst a writable buffer whose remaining length is block aligned
     * @throws dev.iomap.api.DeviceRangeException if the range is not whole blocks inside the device
     * @throws IllegalArgumentException if {@code dst} is read-only
     * @throws IOException if the device is closed
     */
    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        ensureOpen();
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("read: the destination buffer is read-only");
        }
        int length = dst.remaining();
        DeviceCounters.checkRequest("read", offset, length, blockSize, capacity);
        copyOut(offset, MemorySegment.ofBuffer(dst));
        dst.position(dst.limit());
        counters.countRead(length);
    }

    /**
     * Copies the remaining bytes of {@code srcs}, one after the other, to {@code offset} before
     * returning. Never throws; every failure (closed device, bad range, null argument, no memory)
     * is the returned future's exception, and then nothing is counted.
     *
     * @param offset device byte offset, block aligned
     * @param srcs the data, whose total remaining length is block aligned; positions are not changed
     * @param purpose data or metadata, for the statistics
     * @return an already completed future
     */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            ensureOpen();
            Objects.requireNonNull(purpose, "purpose");
            long length = DeviceCounters.totalRemaining(srcs);
            DeviceCounters.checkRequest("write", offset, length, blockSize, capacity);
            long position = offset;
            for (ByteBuffer src : srcs) {
                MemorySegment data = MemorySegment.ofBuffer(src);
                copyIn(position, data);
                position += data.byteSize();
            }
            counters.countWrite(length, purpose);
            return CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Does nothing but count: memory is as durable as this device gets.
     *
     * @throws IOException if the device is closed
     */
    @Override
    public void flush() throws IOException {
        ensureOpen();
        counters.countFlush();
    }

    /**
     * Zeroes the range; later reads of it return zeroes.
     *
     * @param offset device byte offset, block aligned
     * @param length bytes, block aligned
     * @throws dev.iomap.api.DeviceRangeException if the range is not whole blocks inside the device
     * @throws IOException if the device is closed
     */
    @Override
    public void discard(long offset, long length) throws IOException {
        ensureOpen();
        DeviceCounters.checkRequest("discard", offset, length, blockSize, capacity);
        try {
            forEachPiece(offset, length, false, (chunk, inChunk, done, bytes) -> {
                if (chunk != null) {
                    chunk.asSlice(inChunk, bytes).fill((byte) 0);
                }
            });
        } catch (IllegalStateException e) {
            throw closedDuring(e);
        }
        counters.countDiscard(length);
    }

    /** @return the counts so far; answers after close too */
    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    /**
     * Frees the memory. Idempotent; never fails. An operation racing with close either completes
     * or fails with {@link IOException}.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (int i = 0; i < chunks.length(); i++) {
            Chunk chunk = chunks.getAndSet(i, RELEASED);
            if (chunk != null && chunk != RELEASED) {
                chunk.arena().close();
            }
        }
    }

    @Override
    public String toString() {
        return "RamBlockDevice[blockSize=" + blockSize + ", capacity=" + capacity + "]";
    }

    /** What to do with one piece of a device range that lies inside one chunk. */
    @FunctionalInterface
    private interface PieceAction {
        /**
         * @param chunk the chunk's memory, or null if the chunk was never written
         * @param inChunk offset of the piece inside the chunk
         * @param done bytes of the range before this piece
         * @param bytes bytes in the piece
         */
        void apply(MemorySegment chunk, long inChunk, long done, long bytes) throws IOException;
    }

    private void copyOut(long offset, MemorySegment dst) throws IOException {
        try {
            forEachPiece(offset, dst.byteSize(), false, (chunk, inChunk, done, bytes) -> {
                if (chunk == null) {
                    dst.asSlice(done, bytes).fill((byte) 0);
                } else {
                    MemorySegment.copy(chunk, inChunk, dst, done, bytes);
                }
            });
        } catch (IllegalStateException e) {
            throw closedDuring(e);
        }
    }

    private void copyIn(long offset, MemorySegment src) throws IOException {
        try {
            forEachPiece(offset, src.byteSize(), true, (chunk, inChunk, done, bytes) ->
                    MemorySegment.copy(src, done, chunk, inChunk, bytes));
        } catch (IllegalStateException e) {
            throw closedDuring(e);
        }
    }

    /**
     * Splits {@code [offset, offset + length)} at chunk boundaries and applies {@code action} to each
     * piece in order.
     *
     * @param allocateMissing whether a chunk never written is allocated (for writes) or passed to
     *     {@code action} as null (for reads and discards)
     */
    private void forEachPiece(long offset, long length, boolean allocateMissing, PieceAction action)
            throws IOException {
        long done = 0;
        while (done < length) {
            long position = offset + done;
            long inChunk = position & (chunkSize - 1);
            long bytes = Math.min(length - done, chunkSize - inChunk);
            int index = chunkIndex(position);
            MemorySegment chunk = allocateMissing
                    ? allocatedChunk(index, position, bytes)
                    : existingChunk(index);
            action.apply(chunk, inChunk, done, bytes);
            done += bytes;
        }
    }

    /** @return the memory of chunk {@code index}, or null if nothing was written there yet */
    private MemorySegment existingChunk(int index) throws IOException {
        Chunk chunk = chunks.get(index);
        if (chunk == RELEASED) {
            throw closedException();
        }
        return chunk == null ? null : chunk.memory();
    }

    /** @return the memory of chunk {@code index}, allocating it if nothing was written there yet */
    private MemorySegment allocatedChunk(int index, long position, long bytes) throws IOException {
        Chunk chunk = chunks.get(index);
        if (chunk == null) {
            Chunk fresh = allocate(index, position, bytes);
            chunk = chunks.compareAndExchange(index, null, fresh);
            if (chunk == null) {
                chunk = fresh;
            } else {
                fresh.arena().close();
            }
        }
        if (chunk == RELEASED) {
            throw closedException();
        }
        return chunk.memory();
    }

    @SuppressWarnings("MustBeClosedChecker") // the arena goes to the returned Chunk; close() closes every chunk's
    private Chunk allocate(int index, long position, long bytes) throws DeviceIoException {
        long chunkLength = Math.min(chunkSize, capacity - ((long) index << chunkShift));
        Arena arena = Arena.ofShared();
        try {
            return new Chunk(arena, arena.allocate(chunkLength, blockSize));
        } catch (OutOfMemoryError e) {
            arena.close();
            throw new DeviceIoException(
                    "no memory for a " + chunkLength + "-byte RAM device chunk", position, bytes, e);
        }
    }

    private int chunkIndex(long position) {
        return (int) (position >>> chunkShift);
    }

    private void ensureOpen() throws IOException {
        if (closed.get()) {
            throw closedException();
        }
    }

    private IOException closedException() {
        return new IOException(this + " is closed");
    }

    /**
     * An {@link IllegalStateException} from a memory access means the chunk's arena was closed under
     * us, unless the device is still open: then it is the caller's buffer, and not ours to hide.
     */
    private IOException closedDuring(IllegalStateException e) {
        if (!closed.get()) {
            throw e;
        }
        return new IOException(this + " was closed during the operation", e);
    }
}
