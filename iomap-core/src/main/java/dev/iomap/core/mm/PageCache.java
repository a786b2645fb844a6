package dev.iomap.core.mm;

import dev.iomap.api.PageCacheOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * The folios of one inode, by page index: the kernel's {@code address_space}.
 *
 * <p>Folios are naturally aligned ({@code index} a multiple of {@code 2^order}) and never overlap.
 * They live in a {@link FolioIndex}, a radix tree as the kernel's {@code i_pages} xarray. Lookups
 * are lock-free; insertion and removal take the cache's insert lock (and, briefly, the index's own).
 * Dirty and writeback folios are tagged at their first index with the index's marks so that
 * writeback and fsync find them in index order without scanning clean ones.
 *
 * <p>A block larger than a page sets the mapping's minimum folio order (the kernel's
 * {@code mapping_set_folio_min_order}, 6.12): {@code log2(blockSize / pageSize)}, so that a folio
 * always holds whole blocks. Every folio of the cache has at least that order and an index that is a
 * multiple of {@code 2^minOrder} ({@link #alignIndex}, the kernel's {@code mapping_align_index}); the
 * largest order is raised to at least the minimum ({@link #maxOrder}). Folios are never split, so
 * nothing here or above can leave a folio smaller than a block.
 */
public final class PageCache {
    private final PageCacheOptions options;
    private final int pageShift;
    private final int blockShift;
    /** The order of one block: every folio has at least this order (the kernel's {@code mapping_min_folio_order}). */
    private final int minOrder;
    /** The largest folio order: the options' largest, raised to {@link #minOrder} (the kernel's {@code mapping_max_folio_order}). */
    private final int maxOrder;
    private final CacheStats stats;
    private final FolioIndex folios = new FolioIndex();
    /**
     * Serializes {@link #create}'s check-then-insert and {@link #remove}; tag changes do not take it
     * (the index serializes those on its own lock), so a writeback completion never waits for an
     * allocation.
     */
    private final ReentrantLock insertLock = new ReentrantLock();
    private final FolioMemoryPool memory;
    private final FolioLru lru;
    private final LongConsumer beforeAllocate;
    private final Runnable onMemoryExhausted;
    private volatile Consumer<Folio> beforeWritebackUntag = folio -> { };
    /** The inode whose data this is (the kernel's {@code mapping->host}); null for a cache made alone. */
    private volatile dev.iomap.spi.IomapInode host;
    /** What the filesystem does for this mapping (the kernel's {@code mapping->a_ops}). */
    private volatile AddressSpaceOps aops = AddressSpaceOps.NONE;
    private volatile Consumer<Folio> beforeWritebackTag = folio -> { };
    /** Told each time a folio is tagged dirty (the kernel's {@code __mark_inode_dirty} of the host). */
    private volatile Runnable onDirty = () -> { };

    /**
     * A cache with a memory pool of its own, sized by the options' budget (tests, benchmarks). Nothing
     * closes that pool: its memory stays reserved until the JVM exits, so use this only for
     * short-lived caches; an {@code IomapCache} gives its inodes one pool and closes it.
     *
     * @param options page size, largest order, poisoning, budget
     * @param blockSize the filesystem block size: a power of two from 512 to {@link #MAX_BLOCK_SIZE}
     * @param stats where folio creation is counted
     */
    public PageCache(PageCacheOptions options, int blockSize, CacheStats stats) {
        this(options, blockSize, stats, new FolioMemoryPool(options.cacheBudgetBytes(), options.pageSize(),
                Math.max(options.maxFolioOrder(), minOrder(blockSize, options.pageSize()))), new FolioLru(),
                bytes -> { }, () -> { });
    }

    /**
     * @param options page size, largest order, poisoning
     * @param blockSize the filesystem block size: a power of two from 512 to {@link #MAX_BLOCK_SIZE};
     *     larger than the page size it sets the minimum folio order
     * @param stats where folio creation is counted
     * @param memory where folio memory comes from and goes back to (a minimum order above its largest
     *     is served as oversize blocks, see {@link FolioMemoryPool})
     * @param lru the list of folios reclaim looks at, shared by the caches of one memory pool
     * @param beforeAllocate told the size of each new folio before it is allocated (direct reclaim
     *     when the cache is over budget)
     * @param onMemoryExhausted called, without any lock of this cache held, when the pool had no
     *     block even of order 0: reclaim what can be reclaimed before the last-resort allocation
     */
    public PageCache(PageCacheOptions options, int blockSize, CacheStats stats, FolioMemoryPool memory, FolioLru lru,
            LongConsumer beforeAllocate, Runnable onMemoryExhausted) {
        if (Integer.bitCount(blockSize) != 1 || blockSize < 512 || blockSize > MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block size must be a power of two from 512 to " + MAX_BLOCK_SIZE
                    + ", got " + blockSize);
        }
        this.options = options;
        this.pageShift = options.pageShift();
        this.blockShift = Integer.numberOfTrailingZeros(blockSize);
        this.minOrder = minOrder(blockSize, options.pageSize());
        this.maxOrder = Math.max(options.maxFolioOrder(), minOrder);
        this.stats = stats;
        this.memory = memory;
        this.lru = lru;
        this.beforeAllocate = beforeAllocate;
        this.onMemoryExhausted = onMemoryExhausted;
    }

    /** The largest block size a cache takes: 64 KiB, as the kernel's largest filesystem block. */
    public static final int MAX_BLOCK_SIZE = 65536;

    /**
     * The minimum folio order of a mapping whose blocks are {@code blockSize} bytes: the order of one
     * block, 0 when a block fits in a page (the kernel's {@code mapping_set_folio_min_order} argument,
     * as xfs computes it from {@code sb_blocklog - PAGE_SHIFT}).
     *
     * @param blockSize block size, a power of two
     * @param pageSize page size, a power of two
     * @return {@code max(0, log2(blockSize / pageSize))}
     */
    public static int minOrder(int blockSize, int pageSize) {
        return Math.max(0, Integer.numberOfTrailingZeros(blockSize) - Integer.numberOfTrailingZeros(pageSize));
    }

    /**
     * @return the clock folio accesses are stamped with: the blocks the cache's memory pool has handed
     *     out so far (see {@link Folio#touch})
     */
    long accessClock() {
        return memory.allocations();
    }

    /** @param inode the inode whose data this cache holds (the kernel's {@code mapping->host}) */
    public void host(dev.iomap.spi.IomapInode inode) {
        host = inode;
    }

    /** @return the inode whose data this cache holds, for trace events; null for a cache made alone */
    public dev.iomap.spi.IomapInode host() {
        return host;
    }

    /**
     * @param ops what the filesystem above does for this mapping (the kernel's {@code mapping->a_ops});
     *     a cache made alone has {@link AddressSpaceOps#NONE}
     */
    public void aops(AddressSpaceOps ops) {
        aops = java.util.Objects.requireNonNull(ops, "ops");
    }

    /** @return what the filesystem above does for this mapping (the kernel's {@code mapping->a_ops}) */
    public AddressSpaceOps aops() {
        return aops;
    }

    /** @return log2 of the page size */
    public int pageShift() {
        return pageShift;
    }

    /** @return log2 of the block size */
    public int blockShift() {
        return blockShift;
    }

    /**
     * @return the smallest order of any folio of this cache: one block's worth of pages when a block
     *     is larger than a page, else 0 (the kernel's {@code mapping_min_folio_order})
     */
    public int minOrder() {
        return minOrder;
    }

    /**
     * @return the largest order of any folio of this cache: the options' largest folio order, raised
     *     to {@link #minOrder} (the kernel's {@code mapping_max_folio_order})
     */
    public int maxOrder() {
        return maxOrder;
    }

    /**
     * The first page index of the smallest folio that can hold {@code index}: {@code index} rounded
     * down to a multiple of {@code 2^minOrder} (the kernel's {@code mapping_align_index}).
     *
     * @param index page index, at least 0
     * @return the aligned index
     */
    public long alignIndex(long index) {
        return index & -(1L << minOrder);
    }

    /**
     * The order a new folio at {@code index} is asked for with: {@code preferredOrder} raised to
     * {@link #minOrder}, capped at {@link #maxOrder} and at the alignment of {@link #alignIndex
     * alignIndex(index)} (never below the minimum, to which every aligned index is aligned). What
     * {@code __filemap_get_folio} does to its {@code fgf_set_order} hint before it allocates.
     *
     * @param index page index
     * @param preferredOrder the order the caller would like (a hint, may be out of range)
     * @return the order, from {@link #minOrder} to {@link #maxOrder}
     */
    public int orderAt(long index, int preferredOrder) {
        int order = Math.min(Math.max(preferredOrder, minOrder), maxOrder);
        long aligned = alignIndex(index);
        if (aligned != 0) {
            order = Math.min(order, Long.numberOfTrailingZeros(aligned));
        }
        return order;
    }

    /** @return the options this cache was built with */
    public PageCacheOptions options() {
        return options;
    }

    CacheStats stats() {
        return stats;
    }

    /**
     * The folio covering a page index (the kernel's {@code filemap_get_folio}). No reference is taken:
     * a caller that copies out of the folio without its lock takes one with {@link Folio#tryGet}.
     * One walk down the index every time: a hint of the last folio found (kept here before the index
     * was a radix tree) saved about a nanosecond per sequential lookup and cost a dozen on every
     * random one, its shared store being the price of a miss.
     *
     * @param index page index
     * @return the folio, or null if the page is not cached
     */
    public Folio lookup(long index) {
        return folios.get(index);
    }

    /**
     * The folio covering {@code index}, or else the first cached folio after it: the kernel's
     * {@code find_get_entry} as {@code mapping_seek_hole_data} uses it. No reference is taken.
     *
     * @param index page index
     * @return the folio, or null if no page at or after {@code index} is cached
     */
    public Folio findFolio(long index) {
        return folios.findFrom(index);
    }

    /**
     * The folio covering {@code index}, created if missing at {@link #alignIndex alignIndex(index)}
     * with the order {@link #orderAt} gives, lowered (not below {@link #minOrder}) until it fits
     * between cached folios. Returned locked and not under writeback: the kernel's
     * {@code __filemap_get_folio} with {@code FGP_WRITEBEGIN}, as {@code iomap_get_folio} calls it.
     *
     * @param index page index
     * @param preferredOrder the order the caller would like (a hint)
     * @return the locked folio
     */
    public Folio grabLocked(long index, int preferredOrder) {
        while (true) {
            Folio folio = lookup(index);
            if (folio == null) {
                beforeAllocate.accept((long) options.pageSize() << orderAt(index, preferredOrder));
                folio = create(index, preferredOrder, false, false);
                if (folio == null) {
                    onMemoryExhausted.run();
                    folio = create(index, preferredOrder, true, false);
                }
            }
            folio.lock();
            if (!folio.isRemoved()) {
                folio.touch();
                folio.waitWriteback();
                return folio;
            }
            folio.unlock();
        }
    }

    /**
     * Inserts a new, unlocked, not uptodate folio at {@code index} for readahead, as
     * {@code page_cache_ra_unbounded} does with {@code filemap_add_folio}: never over a cached folio,
     * and only from the pool (reclaim runs first if the cache is over budget, but readahead never
     * takes memory from outside the pool).
     *
     * @param index page index; the folio starts at {@link #alignIndex alignIndex(index)}
     * @param order the order wanted: raised to {@link #minOrder}, lowered to the alignment of the
     *     index, to fit before the next cached folio, and to what the pool has, never below the minimum
     * @return the new folio, or null if a folio already covers {@code index} or the pool has no memory
     */
    public Folio addForReadahead(long index, int order) {
        if (lookup(index) != null) {
            return null;
        }
        beforeAllocate.accept((long) options.pageSize() << orderAt(index, order));
        return create(index, order, false, true);
    }

    /**
     * Inserts a new folio at {@link #alignIndex alignIndex(index)}, or returns the one another thread
     * inserted first (the kernel's {@code filemap_add_folio}). Its order is {@link #orderAt}'s, lowered
     * until it fits between cached folios, and until the pool has a block of that order, never below
     * {@link #minOrder} (a min-order slot at an aligned index is either wholly free or covered by the
     * folio found first, as every folio is min-order aligned). A large folio is a hint (as with the kernel's {@code __filemap_get_folio}, whose loop, in
     * {@code __filemap_get_folio_mpol} in the newest kernels, tries the next smaller order when
     * {@code filemap_alloc_folio} fails).
     *
     * @param overflow whether to take memory from outside the pool when it has none at all
     * @param newOnly whether to return null instead of a folio already there
     * @return the folio, or null if the pool had no block and {@code overflow} is false
     */
    private Folio create(long index, int preferredOrder, boolean overflow, boolean newOnly) {
        insertLock.lock();
        try {
            Folio existing = lookup(index);
            if (existing != null) {
                return newOnly ? null : existing;
            }
            int order = orderAt(index, preferredOrder);
            long start = alignIndex(index);
            while (order > minOrder && overlapsCached(start, 1L << order)) {
                order--;
            }
            FolioMemoryPool.FolioMemory block = memory.allocate(order);
            while (block == null && order > minOrder) {
                order--;
                block = memory.allocate(order);
            }
            if (block == null) {
                if (!overflow) {
                    return null;
                }
                block = memory.allocateOverflow(order);
            }
            if (options.poisonNewFolios()) {
                block.segment().fill(PageCacheOptions.POISON_BYTE);
            }
            Folio folio = new Folio(this, start, order, block, memory.copyView(block));
            folios.insert(folio);
            // Stamped at its allocation, so that the access it was made for (a read or write right
            // after) is not a second one, which would earn it a second chance in reclaim.
            folio.touch();
            lru.add(folio);
            stats.folioCreated(order, folio.size());
            return folio;
        } finally {
            insertLock.unlock();
        }
    }

    private boolean overlapsCached(long index, long pages) {
        Folio next = folios.findFrom(index);
        return next != null && next.index() < index + pages;
    }

    /**
     * Removes a folio from the cache and drops the cache's reference to it: its memory goes back to
     * the pool now, or when the last lock-free reader is done. Caller holds its lock; the folio must
     * be clean and not under writeback. The kernel's {@code filemap_remove_folio}.
     *
     * @param folio the folio
     */
    public void remove(Folio folio) {
        boolean removed;
        insertLock.lock();
        try {
            removed = folios.remove(folio);
            if (removed) {
                folio.markRemoved();
                lru.remove(folio);
                stats.folioRemoved(folio.size());
            }
        } finally {
            insertLock.unlock();
        }
        if (removed) {
            folio.put();
        }
    }

    /**
     * Drops a folio marked {@link Folio#setDropBehind drop-behind} if it is clean, not under
     * writeback and its lock is free: the kernel's {@code folio_end_dropbehind} (with
     * {@code filemap_end_dropbehind}), called when the uncached read that created the folio has copied
     * from it and when the folio's writeback ends. A folio dirtied again keeps its mark (its next
     * writeback drops it); one whose lock is held is left for whoever holds it.
     *
     * @param folio a folio of this cache, unlocked or locked by the caller
     */
    public void endDropBehind(Folio folio) {
        if (!folio.isDropBehind() || folio.isDirty() || folio.isWriteback()) {
            return;
        }
        boolean lockedHere = !folio.isLockedByCurrentThread();
        if (lockedHere && !folio.tryLock()) {
            return;
        }
        try {
            if (folio.isRemoved() || folio.isDirty() || folio.isWriteback() || !folio.testClearDropBehind()) {
                return;
            }
            if (aops.releaseFolio(folio)) {
                remove(folio);
            }
        } finally {
            if (lockedHere) {
                folio.unlock();
            }
        }
    }

    /**
     * Gives a released folio's memory back to the pool; called by {@link Folio#put}. The free path of
     * the kernel's {@code folio_put}: {@code __folio_put} calls {@code free_frozen_pages} (was
     * {@code free_unref_page}).
     */
    void freeMemory(FolioMemoryPool.FolioMemory block) {
        memory.free(block);
    }

    /**
     * Folios whose pages intersect {@code [firstIndex, lastIndex]}, in index order (the kernel's
     * {@code filemap_get_folios}).
     *
     * @param firstIndex first page index
     * @param lastIndex last page index, inclusive
     * @return a snapshot list
     */
    public List<Folio> foliosIn(long firstIndex, long lastIndex) {
        List<Folio> result = new ArrayList<>();
        folios.collect(Math.max(0, firstIndex), lastIndex, result);
        return result;
    }

    /**
     * The folios with a page in {@code [firstIndex, lastIndex]} that are dirty or under writeback, in
     * index order: the kernel's {@code filemap_get_folios_dirty}, which fills zero range's folio
     * batch. The dirty tag is walked before the writeback tag, so a folio moving from dirty to
     * writeback meanwhile is found; one whose writeback ends meanwhile may be left out. No references
     * are taken.
     *
     * @param firstIndex first page index
     * @param lastIndex last page index, inclusive
     * @return a snapshot list
     */
    public List<Folio> dirtyFoliosIn(long firstIndex, long lastIndex) {
        Folio covering = lookup(firstIndex);
        long from = covering != null ? covering.index() : firstIndex;
        TreeMap<Long, Folio> found = new TreeMap<>();
        for (long index = nextDirty(from, lastIndex); index >= 0; index = nextDirty(index + 1, lastIndex)) {
            addAt(found, index);
        }
        for (long index = nextWriteback(from, lastIndex); index >= 0; index = nextWriteback(index + 1, lastIndex)) {
            addAt(found, index);
        }
        return new ArrayList<>(found.values());
    }

    private void addAt(Map<Long, Folio> found, long index) {
        Folio folio = folioAt(index);
        if (folio != null) {
            found.put(index, folio);
        }
    }

    /** @return the number of folios cached */
    public int folioCount() {
        return folios.folioCount();
    }

    /**
     * The first index in {@code [fromIndex, lastIndex]} tagged dirty: the step of the kernel's
     * {@code filemap_get_folios_tag} with {@code PAGECACHE_TAG_DIRTY}. Walking the tag with
     * {@code nextDirty(previous + 1, lastIndex)} is weakly consistent, like an iterator of a
     * concurrent set: every index tagged before the walk started and still tagged when the walk
     * passes it is found, indices tagged or untagged meanwhile may or may not be.
     *
     * @param fromIndex first page index; past {@code lastIndex}, or negative (the step after
     *     {@link Long#MAX_VALUE}), there is none
     * @param lastIndex last page index, inclusive
     * @return the index, or -1 if none
     */
    public long nextDirty(long fromIndex, long lastIndex) {
        return folios.nextMarked(FolioIndex.DIRTY, fromIndex, lastIndex);
    }

    /**
     * The first index in {@code [fromIndex, lastIndex]} tagged under writeback (the kernel's
     * {@code filemap_get_folios_tag} with {@code PAGECACHE_TAG_WRITEBACK}); as consistent as
     * {@link #nextDirty}.
     *
     * @param fromIndex first page index; past {@code lastIndex}, or negative, there is none
     * @param lastIndex last page index, inclusive
     * @return the index, or -1 if none
     */
    public long nextWriteback(long fromIndex, long lastIndex) {
        return folios.nextMarked(FolioIndex.WRITEBACK, fromIndex, lastIndex);
    }

    /** @return whether any folio is under writeback (the kernel's {@code mapping_tagged}) */
    public boolean hasWriteback() {
        return folios.markCount(FolioIndex.WRITEBACK) != 0;
    }

    /**
     * Waits until the writeback of the first folio under writeback ends, as reclaim waits on
     * writeback before it gives up: the kernel's {@code folio_wait_writeback} in
     * {@code shrink_folio_list} (its case 3, cgroup v1 reclaim); global reclaim instead sleeps in
     * {@code reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)} until some writeback completes.
     *
     * @return false if no folio was under writeback
     */
    public boolean waitForSomeWriteback() {
        for (long index = nextWriteback(0, Long.MAX_VALUE); index >= 0;
                index = nextWriteback(index + 1, Long.MAX_VALUE)) {
            Folio folio = folioAt(index);
            if (folio != null) {
                folio.waitWriteback();
                return true;
            }
        }
        return false;
    }

    /** @return whether any folio is dirty (the kernel's {@code mapping_tagged}) */
    public boolean hasDirty() {
        return folios.markCount(FolioIndex.DIRTY) != 0;
    }

    /**
     * The folio starting at exactly {@code index}.
     *
     * @param index page index
     * @return the folio or null
     */
    public Folio folioAt(long index) {
        Folio folio = folios.get(index);
        return folio != null && folio.index() == index ? folio : null;
    }

    /** Tags a folio dirty at its first index; caller holds the folio's flag lock. */
    void tagDirty(Folio folio) {
        folios.setMark(FolioIndex.DIRTY, folio.index());
        stats.dirtyBytes(folio.size());
        onDirty.run();
    }

    /**
     * @param hook run after each folio is tagged dirty, under the folio's flag lock: it must be quick
     *     and take no lock of this cache
     */
    public void onDirty(Runnable hook) {
        onDirty = hook;
    }

    /** Clears a folio's dirty tag; caller holds the folio's flag lock. */
    void untagDirty(Folio folio) {
        folios.clearMark(FolioIndex.DIRTY, folio.index());
        stats.dirtyBytes(-folio.size());
    }

    /** Tags a folio under writeback at its first index; caller holds the folio's flag lock. */
    void tagWriteback(Folio folio) {
        beforeWritebackTag.accept(folio);
        folios.setMark(FolioIndex.WRITEBACK, folio.index());
        stats.writebackBytes(folio.size());
    }

    /** Clears a folio's writeback tag; caller holds the folio's flag lock. */
    void untagWriteback(Folio folio) {
        beforeWritebackUntag.accept(folio);
        folios.clearMark(FolioIndex.WRITEBACK, folio.index());
        stats.writebackBytes(-folio.size());
    }

    /**
     * Test seam: runs {@code hook} when a folio's writeback tag is about to be removed, so a test can
     * stop a completing writeback at exactly that point.
     *
     * @param hook called with the folio, on the completing thread
     */
    public void beforeWritebackUntag(Consumer<Folio> hook) {
        beforeWritebackUntag = hook;
    }

    /**
     * Test seam: runs {@code hook} when a folio's writeback tag is about to be set, so a test can stop
     * a starting writeback at exactly that point.
     *
     * @param hook called with the folio, on the thread starting the writeback
     */
    public void beforeWritebackTag(Consumer<Folio> hook) {
        beforeWritebackTag = hook;
    }
}
