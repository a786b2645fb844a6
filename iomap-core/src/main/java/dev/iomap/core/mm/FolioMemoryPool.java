package dev.iomap.core.mm;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.AnonymousMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Arrays;

/**
 * The page allocator of one {@code IomapCache}: folio memory comes from here and goes back here
 * explicitly when a folio is reclaimed, dropped or truncated, never when a garbage collector gets
 * round to it.
 *
 * <p>The buddy allocator of the kernel's {@code mm/page_alloc.c} in miniature (no zones, migrate
 * types or per-CPU lists), over chunks of the largest folio size ({@code pageSize << maxOrder}),
 * reserved lazily, one at a time, and never more than {@code capacity} bytes in all. The chunks are
 * slices of one {@link AnonymousMemory} region reserved at construction: address space only until a
 * folio first touches it, aligned to the chunk size and backed by transparent huge pages, as the
 * kernel's page cache is served from its direct map (where anonymous mappings cannot be had, each
 * chunk is an arena allocation of its own). A free block of order {@code o} is split into two
 * buddies of order {@code o - 1}; a freed block merges with its free buddy. When no block of the
 * order asked for can be had, {@link #allocate} returns null and the caller asks for a smaller
 * order (a folio's order is a hint) or reclaims. {@link #allocateOverflow} is the last resort when
 * nothing can be reclaimed (every folio dirty, locked or under writeback): a block of its own arena,
 * counted, and given back to the system as soon as it is freed.
 *
 * <p>A block of an order above the pool's largest (the minimum folio order of a mapping whose blocks
 * are larger than the pool's largest folio: 16 KiB blocks on a cache of single-page folios) is an
 * oversize block: an arena of its own as an overflow block, but within the capacity and counted in
 * use, as the kernel's buddy allocator serves orders above the page cache's largest
 * ({@code MAX_PAGE_ORDER}). Reserved chunks and oversize blocks together never exceed the capacity.
 *
 * <p>Thread-safe: one lock, held for the free-list updates only (no memory is touched under it).
 * Memory is not cleared between uses; callers fill what they expose (poisoning shows a mistake).
 * After {@link #close} the pooled memory is gone: the caller makes sure no device I/O still uses it.
 */
public final class FolioMemoryPool implements AutoCloseable {
    private final int pageShift;
    private final int maxOrder;
    private final long chunkSize;
    private final int maxChunks;
    /** Where the chunks are cut from, or null: then each chunk is allocated from {@link #arena}. */
    private final AnonymousMemory region;
    private final Arena arena = Arena.ofShared();
    private final List<MemorySegment> chunks = new ArrayList<>();
    /** Bytes of the region each of {@link #regionViews} covers, as a shift: 1 GiB. */
    static final int VIEW_SHIFT = 30;
    /**
     * The region as buffers of 1 GiB each (a buffer holds at most 2 GiB), or null (no region, or
     * chunks larger than a view): what folios copy through, see {@link #copyView}.
     */
    private final ByteBuffer[] regionViews;
    /** Free block handles (byte offsets across the chunks) by order, as bitmaps (no allocation per alloc or free). */
    private final FreeBlocks[] free;
    private long inUseBytes;
    /**
     * Blocks handed out so far, pooled and overflow: the cache's clock for least-recently-used
     * reclaim (see {@link #allocations()}); written under this pool's lock, read without it.
     */
    private volatile long allocations;
    private long overflowBytes;
    private long overflowAllocations;
    /** Bytes of oversize blocks handed out and not freed: part of {@link #inUseBytes}, outside the chunks. */
    private long oversizeBytes;
    /** The handle of an oversize block. */
    private static final long OVERSIZE = -2;
    /** The handle of an overflow block. */
    private static final long OVERFLOW = -1;
    private boolean closed;

    /**
     * @param capacity the most bytes to reserve; rounded up to a whole number of chunks, at least one
     * @param pageSize the page size, a power of two
     * @param maxOrder the largest folio order
     */
    public FolioMemoryPool(long capacity, int pageSize, int maxOrder) {
        this.pageShift = Integer.numberOfTrailingZeros(pageSize);
        this.maxOrder = maxOrder;
        this.chunkSize = (long) pageSize << maxOrder;
        this.maxChunks = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (capacity + chunkSize - 1) / chunkSize));
        this.free = new FreeBlocks[maxOrder + 1];
        for (int order = 0; order <= maxOrder; order++) {
            free[order] = new FreeBlocks(pageShift + order);
        }
        this.region = AnonymousMemory.tryMap(maxChunks * chunkSize,
                Math.max(chunkSize, AnonymousMemory.HUGE_PAGE_SIZE), chunkSize >= AnonymousMemory.HUGE_PAGE_SIZE);
        this.regionViews = region == null || chunkSize > 1L << VIEW_SHIFT ? null : views(region.segment());
    }

    /** Cuts {@code memory} into buffers of 1 GiB (the last may be shorter); touches no memory. */
    private static ByteBuffer[] views(MemorySegment memory) {
        long viewSize = 1L << VIEW_SHIFT;
        ByteBuffer[] views = new ByteBuffer[(int) ((memory.byteSize() + viewSize - 1) >>> VIEW_SHIFT)];
        for (int i = 0; i < views.length; i++) {
            long from = (long) i << VIEW_SHIFT;
            views[i] = memory.asSlice(from, Math.min(viewSize, memory.byteSize() - from)).asByteBuffer();
        }
        return views;
    }

    /**
     * The buffer a folio on {@code block} copies through: one of the pool's region views, which all
     * folios share (so a cache-hit copy touches no per-folio buffer object, one cache miss fewer on a
     * folio not used lately), or null where the block has none (an overflow block, or a pool without a
     * region), when the folio uses a view of its own. A block never straddles two views: blocks are
     * aligned to their size, at most a chunk, and chunks divide a view.
     *
     * @param block a block of this pool
     * @return the shared view holding it, or null
     */
    public ByteBuffer copyView(FolioMemory block) {
        return regionViews == null || block.handle() < 0 ? null : regionViews[(int) (block.handle() >>> VIEW_SHIFT)];
    }

    /**
     * @param block a block of this pool with a {@link #copyView}
     * @return the index of the block's first byte in its {@link #copyView}
     */
    public static int copyBase(FolioMemory block) {
        return (int) (block.handle() & ((1L << VIEW_SHIFT) - 1));
    }

    /**
     * A block of {@code pageSize << order} bytes, aligned to the page size (to its own size inside a
     * chunk), from the pool: the smallest free block of at least that order, split down (the kernel's
     * {@code __rmqueue_smallest} and {@code expand}, now called through {@code page_del_and_expand}).
     *
     * @param order folio order, 0 to {@link PageCacheOptions#MAX_ORDER}; above {@link #maxOrder} an
     *     oversize block (see the class comment)
     * @return the block, or null if the pool has no block of that order and may not grow
     * @throws IllegalStateException after {@link #close}
     */
    public FolioMemory allocate(int order) {
        checkOrder(order);
        if (order > maxOrder) {
            return allocateOversize(order);
        }
        return allocatePooled(order);
    }

    private synchronized FolioMemory allocatePooled(int order) {
        ensureOpen();
        int from = order;
        while (from <= maxOrder && free[from].isEmpty()) {
            from++;
        }
        if (from > maxOrder) {
            if (chunks.size() >= maxChunks || (chunks.size() + 1) * chunkSize + oversizeBytes > capacity()) {
                return null;
            }
            long handle = (long) chunks.size() * chunkSize;
            chunks.add(region != null ? region.segment().asSlice(handle, chunkSize)
                    : arena.allocate(chunkSize, 1L << pageShift));
            free[maxOrder].add(handle);
            from = maxOrder;
        }
        long handle = free[from].pollFirst();
        while (from > order) {
            from--;
            free[from].add(handle + blockSize(from));
        }
        inUseBytes += blockSize(order);
        allocations++;
        MemorySegment chunk = chunks.get((int) (handle / chunkSize));
        return new FolioMemory(chunk.asSlice(handle % chunkSize, blockSize(order)), order, handle, null);
    }

    /** An oversize block, if the capacity has room for it beside the reserved chunks. */
    @SuppressWarnings("MustBeClosedChecker") // the arena goes to the returned FolioMemory, which closes it
    private FolioMemory allocateOversize(int order) {
        long size = blockSize(order);
        synchronized (this) {
            ensureOpen();
            if (chunks.size() * chunkSize + oversizeBytes + size > capacity()) {
                return null;
            }
            oversizeBytes += size;
            inUseBytes += size;
            allocations++;
        }
        Arena own = Arena.ofShared();
        return new FolioMemory(own.allocate(size, 1L << pageShift), order, OVERSIZE, own);
    }

    /**
     * A block outside the pool, for when the pool is exhausted and nothing could be reclaimed. Its
     * memory goes back to the system when it is {@linkplain #free freed}. No kernel counterpart: the
     * kernel would throttle the allocation in reclaim or invoke the OOM killer instead.
     *
     * @param order folio order
     * @return the block
     */
    @SuppressWarnings("MustBeClosedChecker") // the arena goes to the returned FolioMemory, which closes it
    public FolioMemory allocateOverflow(int order) {
        checkOrder(order);
        Arena own = Arena.ofShared();
        MemorySegment segment = own.allocate(blockSize(order), 1L << pageShift);
        synchronized (this) {
            ensureOpen();
            overflowBytes += segment.byteSize();
            overflowAllocations++;
            allocations++;
        }
        return new FolioMemory(segment, order, OVERFLOW, own);
    }

    /**
     * The number of blocks handed out so far ({@link #allocate} and {@link #allocateOverflow}): the
     * clock that folio accesses are stamped with for reclaim. Reclaim runs because folios are
     * allocated, so recency counted in allocations orders folios as reclaim needs; folios accessed
     * between the same two allocations tie. A hit reads it (one shared, rarely written line) instead of
     * the system clock, which costs ~27 ns on a virtual machine: a tenth of a cached 1 KiB write.
     *
     * @return blocks allocated since the pool was made
     */
    long allocations() {
        return allocations;
    }

    /**
     * Returns a block. The caller guarantees nobody reads or writes it any more. A pooled block merges
     * with its free buddy, order by order (the kernel's {@code __free_one_page}).
     *
     * @param memory a block from this pool, freed once
     */
    public void free(FolioMemory memory) {
        if (memory.overflowArena() != null) {
            synchronized (this) {
                if (memory.handle() == OVERSIZE) {
                    oversizeBytes -= memory.segment().byteSize();
                    inUseBytes -= memory.segment().byteSize();
                } else {
                    overflowBytes -= memory.segment().byteSize();
                }
            }
            memory.overflowArena().close();
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            long handle = memory.handle();
            int order = memory.order();
            if (free[order].contains(handle)) {
                throw new IllegalStateException("block " + handle + " freed twice");
            }
            inUseBytes -= blockSize(memory.order());
            while (order < maxOrder) {
                long buddy = handle ^ blockSize(order);
                if (!free[order].remove(buddy)) {
                    break;
                }
                handle = Math.min(handle, buddy);
                order++;
            }
            free[order].add(handle);
        }
    }

    /** @return the largest order of a block this pool hands out (a chunk is one block of it) */
    public int maxOrder() {
        return maxOrder;
    }

    /** @return bytes reserved from the system for the pool (chunks taken so far) */
    public synchronized long reservedBytes() {
        return chunks.size() * chunkSize;
    }

    /** @return bytes of pooled blocks handed out and not freed */
    public synchronized long inUseBytes() {
        return inUseBytes;
    }

    /** @return bytes of overflow blocks handed out and not freed */
    public synchronized long overflowBytes() {
        return overflowBytes;
    }

    /** @return how many overflow blocks were ever handed out */
    public synchronized long overflowAllocations() {
        return overflowAllocations;
    }

    /** @return the most bytes the pool reserves */
    public long capacity() {
        return maxChunks * chunkSize;
    }

    /** Gives the pooled memory back to the system. Overflow blocks still out are freed by their owners. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        chunks.clear();
        Arrays.stream(free).forEach(FreeBlocks::clear);
        arena.close();
        if (region != null) {
            region.close();
        }
    }

    private long blockSize(int order) {
        return 1L << (pageShift + order);
    }

    private void checkOrder(int order) {
        if (order < 0 || order > Math.max(maxOrder, PageCacheOptions.MAX_ORDER)) {
            throw new IllegalArgumentException("order must be 0.." + Math.max(maxOrder, PageCacheOptions.MAX_ORDER)
                    + ", got " + order);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the folio memory pool is closed");
        }
    }

    /**
     * The free blocks of one order: a bitmap over block numbers (handle {@code >>} the block's shift),
     * grown as chunks are reserved, with a count and a lower bound of the first non-empty word, so
     * that the lowest free block is found as a sorted set's {@code pollFirst} would find it, without
     * the set's boxed keys and entries. Not thread-safe: the pool's lock guards it.
     */
    private static final class FreeBlocks {
        private final int shift;
        private long[] words = new long[1];
        private int count;
        /** No word below this one has a bit set. */
        private int firstWord;

        FreeBlocks(int shift) {
            this.shift = shift;
        }

        boolean isEmpty() {
            return count == 0;
        }

        void add(long handle) {
            long block = handle >>> shift;
            int word = (int) (block >>> 6);
            if (word >= words.length) {
                words = Arrays.copyOf(words, Math.max(word + 1, words.length * 2));
            }
            words[word] |= 1L << block;
            count++;
            firstWord = Math.min(firstWord, word);
        }

        boolean contains(long handle) {
            long block = handle >>> shift;
            int word = (int) (block >>> 6);
            return word < words.length && (words[word] & (1L << block)) != 0;
        }

        /** @return whether the block was free (and is now taken) */
        boolean remove(long handle) {
            long block = handle >>> shift;
            int word = (int) (block >>> 6);
            long bit = 1L << block;
            if (word >= words.length || (words[word] & bit) == 0) {
                return false;
            }
            words[word] &= ~bit;
            count--;
            return true;
        }

        /** Takes the lowest free block; there must be one. */
        long pollFirst() {
            int word = firstWord;
            while (words[word] == 0) {
                word++;
            }
            firstWord = word;
            long bits = words[word];
            long lowest = bits & -bits;
            words[word] = bits & ~lowest;
            count--;
            return (((long) word << 6) + Long.numberOfTrailingZeros(lowest)) << shift;
        }

        void clear() {
            Arrays.fill(words, 0);
            count = 0;
            firstWord = 0;
        }
    }

    /**
     * One block of folio memory.
     *
     * @param segment the memory
     * @param order its order
     * @param handle its place in the pool, or -1 for an overflow block, -2 for an oversize one
     * @param overflowArena the arena of an overflow or oversize block, else null
     */
    public record FolioMemory(MemorySegment segment, int order, long handle, Arena overflowArena) {
    }
}
