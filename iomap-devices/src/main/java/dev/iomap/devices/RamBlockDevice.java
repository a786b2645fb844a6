package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A block device in off-heap memory, zero-filled when created: the device of the command line's
 * {@code ram} option, of the examples and of the tests. Tests also take images of it
 * ({@link #copy()}) and look into or damage it ({@link #peek}, {@link #poke}) past the block
 * interface.
 *
 * <p>The memory is split into chunks of 64 KiB (one block, if blocks are larger). A chunk is allocated
 * the first time something is written to it; reading a chunk never written returns zeroes without
 * allocating it, so a large, mostly empty device costs little. Chunks are the JVM's direct memory:
 * they count against {@code -XX:MaxDirectMemorySize} (by default the maximum heap size), and if none
 * is left for a chunk, the write that needed it fails with {@link DeviceIoException}. The memory is
 * freed when the device is no longer reachable, not by {@link #close()}. A device made by
 * {@link #withHugePages} cuts its chunks from 2 MiB regions in huge pages instead, outside the direct
 * memory limit.
 *
 * <p>Thread-safe: every method runs in the calling thread without a device-wide lock, so any number
 * may run at once. Concurrent operations on overlapping ranges are not atomic with respect to each
 * other (a read, {@link #peek} or {@link #copy()} racing a write may see part of it), as on a real
 * disk.
 *
 * <p>A write is complete when {@code write} returns: the future it returns is already completed,
 * normally or exceptionally; {@code write} itself never throws. The caller's buffers are read from
 * their position to their limit and their positions are left unchanged. {@link #flush()} has nothing
 * to do (the device is as durable as it will ever be) but is counted.
 *
 * <p>Bad requests (negative, unaligned, overflowing or past the end) get
 * {@link DeviceRangeException}; see {@link DeviceCounters#checkRequest}. Null arguments get
 * {@link NullPointerException} (for a write: as the future's exception).
 *
 * <p>After {@link #close()}, every read, write, flush and discard fails with {@link IOException} (for
 * a write: as the future's exception). {@link #blockSize()}, {@link #capacity()}, {@link #stats()},
 * {@link #isClosed()}, {@link #copy()}, {@link #peek} and {@link #poke} keep working, so that a test
 * can still look at the image of a device that a filesystem has closed.
 */
public final class RamBlockDevice implements BlockDevice {
    /** Bytes per chunk unless blocks are larger or a test asks for another size. */
    static final long DEFAULT_CHUNK_SIZE = 64L << 10;
    /** Bytes per huge-page region of a device made by {@link #withHugePages}. */
    private static final long SLAB_SIZE = AnonymousMemory.HUGE_PAGE_SIZE;

    private final int blockSize;
    private final long capacity;
    private final long chunkSize;
    private final int chunkShift;
    /** Frees every chunk once neither the device nor a chunk is reachable. */
    private final Arena arena = Arena.ofAuto();
    private final AtomicReferenceArray<MemorySegment> chunks;
    /**
     * With huge pages: the 2 MiB regions chunks are cut from, each mapped when its first chunk is
     * written ({@link AnonymousMemory#tryMapUntilUnreachable}); null without.
     */
    private final AtomicReferenceArray<MemorySegment> slabs;
    private final DeviceCounters counters = new DeviceCounters();
    private volatile boolean closed;

    /**
     * Creates a zero-filled device.
     *
     * @param blockSize a power of two, at least 512
     * @param capacity bytes, a positive multiple of {@code blockSize}
     * @throws IllegalArgumentException if either value is not allowed
     */
    public RamBlockDevice(int blockSize, long capacity) {
        this(blockSize, capacity, Math.max(DEFAULT_CHUNK_SIZE, blockSize));
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
        this(blockSize, capacity, chunkSize, false);
    }

    /**
     * Creates a zero-filled device whose memory comes in transparent huge pages: 2 MiB regions
     * mapped when something is first written into them, cut into the usual chunks. Writing a new
     * region costs one page fault instead of 512, so a benchmark measures the cache above the device
     * rather than the host's page faults (the kernel's RAM disk, {@code brd}, takes its pages from the
     * page allocator without faulting either); the price is memory in steps of 2 MiB instead of
     * 64 KiB, so it suits large devices written densely, not sparse test images. Memory outside the
     * JVM's direct memory limit; it goes back when the device is unreachable. Where huge pages or
     * anonymous mappings cannot be had, the device works as {@link #RamBlockDevice(int, long)} does.
     *
     * @param blockSize a power of two, at least 512, at most 2 MiB
     * @param capacity bytes, a positive multiple of {@code blockSize}
     * @return the device
     * @throws IllegalArgumentException if either value is not allowed
     */
    public static RamBlockDevice withHugePages(int blockSize, long capacity) {
        if (blockSize > AnonymousMemory.HUGE_PAGE_SIZE) {
            throw new IllegalArgumentException("block size " + blockSize + " is larger than a huge page");
        }
        return new RamBlockDevice(blockSize, capacity, Math.max(DEFAULT_CHUNK_SIZE, blockSize), true);
    }

    private RamBlockDevice(int blockSize, long capacity, long chunkSize, boolean hugePages) {
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
        this.slabs = hugePages ? new AtomicReferenceArray<>((int) Math.ceilDiv(capacity, SLAB_SIZE)) : null;
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
     * its limit. On an exception {@code dst} is unchanged.
     *
     * @param offset device byte offset, block aligned
     * @param dst a writable buffer whose remaining length is block aligned
     * @throws DeviceRangeException if the range is not whole blocks inside the device
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
        long length = 0;
        try {
            ensureOpen();
            Objects.requireNonNull(purpose, "purpose");
            length = DeviceCounters.totalRemaining(srcs);
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
        } catch (OutOfMemoryError e) {
            return CompletableFuture.failedFuture(new DeviceIoException(
                    "no memory for a " + chunkSize + "-byte RAM device chunk", offset, length, e));
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
     * @throws DeviceRangeException if the range is not whole blocks inside the device
     * @throws IOException if the device is closed
     */
    @Override
    public void discard(long offset, long length) throws IOException {
        ensureOpen();
        DeviceCounters.checkRequest("discard", offset, length, blockSize, capacity);
        zero(offset, length);
        counters.countDiscard(length);
    }

    /** @return the counts so far; answers after close too */
    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    /**
     * Ends I/O: every later read, write, flush and discard fails with {@link IOException}. The
     * contents stay, for {@link #peek} and {@link #copy()}. Idempotent; never fails. An operation
     * racing with close either completes or fails with {@link IOException}.
     */
    @Override
    public void close() {
        closed = true;
    }

    /** @return whether {@link #close()} was called */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Takes an image: a new, open device of the same geometry holding what this one holds now, with
     * its own memory and counters at zero. Works after close.
     *
     * @return the copy
     * @throws OutOfMemoryError if there is no direct memory left for the copy
     */
    public RamBlockDevice copy() {
        RamBlockDevice copy = new RamBlockDevice(blockSize, capacity, chunkSize);
        for (int index = 0; index < chunks.length(); index++) {
            MemorySegment chunk = chunks.get(index);
            if (chunk != null) {
                copy.chunks.set(index, copy.allocate(index).copyFrom(chunk));
            }
        }
        return copy;
    }

    /**
     * Reads bytes without counting them and without the alignment and open checks: for a test that
     * inspects an image. Works after close.
     *
     * @param offset device byte offset, any
     * @param length bytes, any
     * @return the bytes
     * @throws DeviceRangeException if the range is negative or not inside the device
     */
    public byte[] peek(long offset, int length) throws DeviceRangeException {
        DeviceRangeException.checkRange("peek", offset, length, capacity);
        byte[] bytes = new byte[length];
        copyOut(offset, MemorySegment.ofArray(bytes));
        return bytes;
    }

    /**
     * Writes bytes without counting them and without the alignment and open checks: for a test that
     * damages an image. Works after close.
     *
     * @param offset device byte offset, any
     * @param data the bytes
     * @param from first index in {@code data}
     * @param length bytes
     * @throws DeviceRangeException if the device range is negative or not inside the device
     * @throws IndexOutOfBoundsException if {@code [from, from + length)} is not inside {@code data}
     * @throws OutOfMemoryError if there is no direct memory left for a chunk
     */
    public void poke(long offset, byte[] data, int from, int length) throws DeviceRangeException {
        DeviceRangeException.checkRange("poke", offset, length, capacity);
        Objects.checkFromIndexSize(from, length, data.length);
        store(offset, data, from, length);
    }

    /** @return the class name and geometry, for messages */
    @Override
    public String toString() {
        return "RamBlockDevice[blockSize=" + blockSize + ", capacity=" + capacity + "]";
    }

    /** {@link #poke} for callers that checked the range: a range outside the device is a bug. */
    void store(long offset, byte[] data, int from, int length) {
        copyIn(offset, MemorySegment.ofArray(data).asSlice(from, length));
    }

    /** Zeroes a range the caller checked, without counting. */
    void zero(long offset, long length) {
        forEachPiece(offset, length, false, (chunk, inChunk, done, bytes) -> {
            if (chunk != null) {
                chunk.asSlice(inChunk, bytes).fill((byte) 0);
            }
        });
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
        void apply(MemorySegment chunk, long inChunk, long done, long bytes);
    }

    private void copyOut(long offset, MemorySegment dst) {
        forEachPiece(offset, dst.byteSize(), false, (chunk, inChunk, done, bytes) -> {
            if (chunk == null) {
                dst.asSlice(done, bytes).fill((byte) 0);
            } else {
                MemorySegment.copy(chunk, inChunk, dst, done, bytes);
            }
        });
    }

    private void copyIn(long offset, MemorySegment src) {
        forEachPiece(offset, src.byteSize(), true, (chunk, inChunk, done, bytes) ->
                MemorySegment.copy(src, done, chunk, inChunk, bytes));
    }

    /**
     * Splits {@code [offset, offset + length)} at chunk boundaries and applies {@code action} to each
     * piece in order.
     *
     * @param allocateMissing whether a chunk never written is allocated (for writes) or passed to
     *     {@code action} as null (for reads and discards)
     */
    private void forEachPiece(long offset, long length, boolean allocateMissing, PieceAction action) {
        long done = 0;
        while (done < length) {
            long position = offset + done;
            long inChunk = position & (chunkSize - 1);
            long bytes = Math.min(length - done, chunkSize - inChunk);
            int index = (int) (position >>> chunkShift);
            MemorySegment chunk = chunks.get(index);
            if (chunk == null && allocateMissing) {
                chunk = allocated(index);
            }
            action.apply(chunk, inChunk, done, bytes);
            done += bytes;
        }
    }

    /**
     * @return chunk {@code index}, allocated now unless another thread did first (the loser's memory
     *     is freed with the device's: at most one chunk per racing thread)
     */
    private MemorySegment allocated(int index) {
        MemorySegment fresh = allocate(index);
        MemorySegment raced = chunks.compareAndExchange(index, null, fresh);
        return raced == null ? fresh : raced;
    }

    /** @return zeroed memory for chunk {@code index} (the last chunk may be short) */
    private MemorySegment allocate(int index) {
        long offset = (long) index << chunkShift;
        long bytes = Math.min(chunkSize, capacity - offset);
        if (slabs != null) {
            int slabIndex = (int) (offset / SLAB_SIZE);
            MemorySegment slab = slabs.get(slabIndex);
            if (slab == null) {
                long slabBytes = Math.min(SLAB_SIZE, capacity - (long) slabIndex * SLAB_SIZE);
                MemorySegment fresh = AnonymousMemory.tryMapUntilUnreachable(slabBytes, SLAB_SIZE, true);
                if (fresh != null) {
                    MemorySegment raced = slabs.compareAndExchange(slabIndex, null, fresh);
                    slab = raced == null ? fresh : raced;
                }
            }
            if (slab != null) {
                // never written before (chunks are allocated once), so still zero as mapped
                return slab.asSlice(offset % SLAB_SIZE, bytes);
            }
        }
        return arena.allocate(bytes);
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException(this + " is closed");
        }
    }
}
