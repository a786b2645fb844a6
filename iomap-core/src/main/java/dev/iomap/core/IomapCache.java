package dev.iomap.core;

import dev.iomap.api.IoStats;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.mm.CacheStats;
import dev.iomap.core.mm.Flusher;
import dev.iomap.core.mm.FolioLru;
import dev.iomap.core.mm.FolioMemoryPool;
import dev.iomap.core.mm.FolioMemoryStats;
import dev.iomap.core.mm.PageCache;
import dev.iomap.core.mm.ReadaheadPool;
import dev.iomap.core.mm.ReadaheadStats;
import dev.iomap.core.mm.Reclaim;
import dev.iomap.core.mm.WritebackDomain;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * The page cache of one mounted device: its inodes, their folios, the statistics that give write
 * amplification, and the background work that keeps it within bounds: the flusher (background
 * writeback past {@code dirtyBackgroundBytes} or {@code dirtyExpire}), throttling of writers past
 * {@code dirtyLimitBytes}, and reclaim of clean folios past {@code cacheBudgetBytes}. The VFS layer
 * ({@code dev.iomap.core.vfs.CoreFileSystem}) creates one per mount with the constructor and starts
 * the flusher only when {@code MountOptions.backgroundWriteback} is set; embedders without a mount
 * create one per device with {@link IomapEngine#newCache(BlockDevice)}, which always starts it.
 *
 * <p>Thread-safe. Closing it stops the flusher and forgets every inode without writing anything
 * back; call {@link #syncAll()} first to keep dirty data.
 */
public final class IomapCache implements AutoCloseable {
    private final PageCacheOptions options;
    private final BlockDevice device;
    private final CacheStats stats = new CacheStats();
    private final ConcurrentMap<Long, CachedInode> inodes = new ConcurrentHashMap<>();
    /**
     * The inodes that may have dirty folios (the kernel's {@code wb->b_dirty}): an inode joins when a
     * folio of it is tagged dirty and leaves when {@link #forEachDirtyInode} finds it clean, so that the
     * flusher's passes cost the dirty inodes, not every cached one.
     */
    private final Set<CachedInode> dirtyInodes = ConcurrentHashMap.newKeySet();
    /**
     * The most threads that run ioend completion work at once for one cache: the kernel's completion
     * workqueues are bounded too ({@code max_active}). Completion work may block on metadata I/O, so
     * there are more threads than CPUs, but never one per ioend: a burst of completions queues.
     */
    static final int COMPLETION_THREADS = Math.max(4, Runtime.getRuntime().availableProcessors());
    private final ExecutorService completions = completionPool(this::uncaught);
    private final FolioMemoryPool folioMemory;
    private final FolioLru folioLru = new FolioLru();
    /** This cache as its flusher and reclaimer see it. */
    private final WritebackDomain domain = new Domain();
    private final Reclaim reclaim = new Reclaim(domain);
    private final Flusher flusher = new Flusher(domain);
    private final ReadaheadPool readahead = new ReadaheadPool(this::uncaught);
    /** Told of an {@link OutOfMemoryError} of background work; see {@link #onOutOfMemory}. */
    private volatile java.util.function.Consumer<OutOfMemoryError> outOfMemory = e -> { };
    /** The longest a throttled writer sleeps before it re-checks (the kernel's {@code MAX_PAUSE} is 200 ms). */
    private static final java.time.Duration THROTTLE_PAUSE = java.time.Duration.ofMillis(10);
    private static final java.time.Duration DROP_WAITS_FOR_READAHEAD = java.time.Duration.ofSeconds(10);

    /**
     * @param options page size, folio orders, the experiment switches
     * @param device where the data lives; its block size may exceed the page size (up to
     *     {@link PageCache#MAX_BLOCK_SIZE}), as may the block size of any inode added: the inode's
     *     folios then have a minimum order (see {@link PageCache})
     */
    public IomapCache(PageCacheOptions options, BlockDevice device) {
        this.options = Objects.requireNonNull(options, "options");
        this.device = Objects.requireNonNull(device, "device");
        if (device.blockSize() > PageCache.MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("device block size " + device.blockSize()
                    + " is larger than the largest block the page cache takes, " + PageCache.MAX_BLOCK_SIZE);
        }
        // The budget plus one largest folio: reclaim keeps the cache under the budget, the slack
        // lets a large folio be placed while the blocks freed by reclaim are still fragmented. The
        // pool's largest order holds a device block too; an inode's larger blocks come as the pool's
        // oversize blocks.
        this.folioMemory = new FolioMemoryPool(options.cacheBudgetBytes() + options.maxFolioSize(),
                options.pageSize(), Math.max(options.maxFolioOrder(),
                        PageCache.minOrder(device.blockSize(), options.pageSize())));
        // A throttled writer wakes when the writeback that ends brings the total under the limit.
        stats.onWritebackEnded(() -> {
            if (flusher.hasThrottled() && pendingBytes() <= options.dirtyLimitBytes()) {
                flusher.wakeThrottled();
            }
        });
    }

    /**
     * Sets what an {@link OutOfMemoryError} in background work of this cache does: in the flusher, an
     * ioend's submission or completion, background readahead. That work stops (the folios of an ioend
     * end their writeback with the error, which fsync reports) and {@code handler} is told, in the
     * thread that met the error; the VFS layer shuts the mount down. Without a handler the error is only
     * recorded that way.
     *
     * @param handler what to do, called once per error met; must not throw
     */
    public void onOutOfMemory(java.util.function.Consumer<OutOfMemoryError> handler) {
        outOfMemory = Objects.requireNonNull(handler, "handler");
    }

    /** Reports an {@link OutOfMemoryError} of background work to the {@link #onOutOfMemory} handler. */
    void outOfMemory(OutOfMemoryError error) {
        outOfMemory.accept(error);
    }

    /** What a thread of this cache does with an error nothing caught: reports an out of memory, then dies as usual. */
    private void uncaught(Thread thread, Throwable error) {
        if (error instanceof OutOfMemoryError oom) {
            outOfMemory(oom);
        }
        thread.getThreadGroup().uncaughtException(thread, error);
    }

    /** @return the options */
    public PageCacheOptions options() {
        return options;
    }

    /** @return the device */
    public BlockDevice device() {
        return device;
    }

    /**
     * Adds an inode to the cache.
     *
     * @param ino inode number, not yet in this cache
     * @param blockSize the filesystem block size: a power of two from 512 to
     *     {@link PageCache#MAX_BLOCK_SIZE}; larger than the page size it sets the minimum folio order
     * @param size the current file size
     * @param maxFileSize the largest size the file may reach
     * @param ops how the adapter maps the file
     * @param writebackOps how the adapter takes part in writeback
     * @return the inode
     * @throws IllegalStateException if {@code ino} is already cached
     */
    public CachedInode addInode(long ino, int blockSize, long size, long maxFileSize, IomapOps ops,
            WritebackOps writebackOps) {
        CachedInode inode = new CachedInode(this, ino, blockSize, size, maxFileSize, ops, writebackOps);
        if (inodes.putIfAbsent(ino, inode) != null) {
            throw new IllegalStateException("inode " + ino + " is already cached");
        }
        return inode;
    }

    /**
     * Opens the whole device as one file through {@link BlockDeviceMapping} (file offset = device
     * offset, always mapped), as inode 0.
     *
     * @return an open file of {@link BlockDevice#capacity()} bytes
     */
    public OpenFile openBlockDevice() {
        CachedInode inode = inodes.get(0L);
        if (inode == null) {
            BlockDeviceMapping mapping = new BlockDeviceMapping(device);
            inode = inodes.computeIfAbsent(0L, ino -> new CachedInode(this, ino, device.blockSize(),
                    device.capacity(), device.capacity(), mapping, mapping));
        }
        return inode.open();
    }

    /**
     * Forgets an inode whose file is gone: drops its folios without writing them back (the kernel's
     * {@code truncate_inode_pages_final}).
     *
     * @param ino inode number
     */
    public void removeInode(long ino) {
        CachedInode inode = inodes.remove(ino);
        if (inode != null) {
            inode.discardCache();
            dirtyInodes.remove(inode);
        }
    }

    /**
     * @param ino inode number
     * @return the cached inode, or null
     */
    public CachedInode inode(long ino) {
        return inodes.get(ino);
    }

    /** @return the cached inodes */
    public Collection<CachedInode> inodes() {
        return List.copyOf(inodes.values());
    }

    /**
     * Records that {@code inode} has a dirty folio: {@link PageCache#tagDirty} calls this. Adding an
     * inode already on the list is a read (the map's lock-free path for a present key).
     */
    void inodeDirtied(CachedInode inode) {
        dirtyInodes.add(inode);
    }

    /**
     * Visits the inodes with dirty folios, in no particular order, until {@code visitor} returns false,
     * forgetting the inodes it finds clean on the way, so that a pass that stops early costs the inodes
     * it visited, not every dirty one. An inode tagged dirty while this runs stays on the list either
     * way: it is removed before its tags are read again, and a tag set after that read adds it back.
     *
     * @param visitor told each dirty inode; returns whether to go on
     */
    void forEachDirtyInode(Predicate<CachedInode> visitor) {
        for (Iterator<CachedInode> it = dirtyInodes.iterator(); it.hasNext(); ) {
            CachedInode inode = it.next();
            if (!inode.pageCache().hasDirty()) {
                it.remove();
                if (!inode.pageCache().hasDirty()) {
                    continue;
                }
                dirtyInodes.add(inode);
            }
            if (!visitor.test(inode)) {
                return;
            }
        }
    }

    /**
     * Writes back every dirty folio of every inode, waits for it and flushes the device (the kernel's
     * {@code sync_filesystem}).
     *
     * @throws IOException if the flush fails (writeback errors go to each inode's open files)
     */
    public void syncAll() throws IOException {
        for (CachedInode inode : inodes.values()) {
            inode.writeAndWait(0, Long.MAX_VALUE);
        }
        device.flush();
    }

    /**
     * Starts the flusher thread. Without it dirty data is written back only by fsync, sync, writers
     * hitting the dirty limit, and explicit {@link CachedInode#writeback} calls. Idempotent.
     */
    public void startBackgroundWriteback() {
        flusher.start();
    }

    /**
     * Stops the flusher and waits for its current pass to end; dirty data then goes back only through
     * explicit writeback and sync. Unmount calls it before the final sync so that no background pass
     * reaches the adapter after its unmount. Idempotent; the flusher cannot be started again.
     */
    public void stopBackgroundWriteback() {
        flusher.stop();
    }

    /** @return whether the flusher was started and has not been stopped */
    public boolean isBackgroundWritebackRunning() {
        return flusher.isRunning();
    }

    /**
     * Drops every clean, unlocked folio (the kernel's {@code drop_caches}: {@code drop_pagecache_sb}
     * calling {@code invalidate_mapping_pages}, that is {@code mapping_try_invalidate}, on each inode);
     * dirty folios and folios under writeback stay.
     *
     * <p>Background readahead already queued or running is waited for first, and a reclaimer already
     * running is waited for rather than left to do the work (readahead for at most ten seconds): a folio that readahead still holds locked
     * cannot be dropped, and a reclaimer that only shrinks to the budget leaves most of the cache in
     * place, so without both waits a caller could find clean folios of its own reads still cached.
     *
     * @return bytes freed
     */
    public long dropCleanCache() {
        try {
            readahead.awaitQuiet(DROP_WAITS_FOR_READAHEAD);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return reclaim.shrinkNow(0);
    }

    /**
     * Throttles a writer while dirty data and data under writeback together are above the hard limit
     * (the kernel's {@code balance_dirty_pages}, which counts {@code NR_WRITEBACK} with the dirty
     * pages, so that writes queued to a slow device cannot fill the cache either).
     *
     * <p>With the flusher running the throttling is IO-less, as the kernel's has been since 3.2: the
     * writer does not write back, it pauses until the flusher's writeback brings the total under the
     * limit (woken by the folio whose writeback end does so), and the flusher writes on its own core
     * while the writer copies on another. A pause that sees no writeback end at all (the flusher may
     * be waiting for something the writer holds, such as a lock an adapter keeps from a mapping's
     * {@code begin} to its {@code end}) makes the writer write back its own inode, as it does when
     * there is no flusher: then, while still above, it writes back every inode and waits for a folio's
     * writeback to end. Gives up after about a second.
     */
    void balanceDirty(CachedInode writer) {
        long limit = options.dirtyLimitBytes();
        if (pendingBytes() <= limit) {
            if (stats.dirtyBytes() > options.dirtyBackgroundBytes() && flusher.isRunning()) {
                flusher.kick();
            }
            return;
        }
        if (!flusher.isRunning()) {
            writer.writeback(0, Long.MAX_VALUE, false);
        }
        for (int round = 0; round < 100 && pendingBytes() > limit; round++) {
            if (flusher.isRunning()) {
                long ended = stats.writebackEndedBytes();
                flusher.throttle(THROTTLE_PAUSE, () -> pendingBytes() > limit);
                if (pendingBytes() > limit && stats.writebackEndedBytes() == ended) {
                    writer.writeback(0, Long.MAX_VALUE, false);
                }
            } else {
                for (CachedInode inode : inodes.values()) {
                    inode.writeback(0, Long.MAX_VALUE, false);
                }
                if (!waitForSomeWriteback()) {
                    return;
                }
            }
        }
    }

    private long pendingBytes() {
        return stats.dirtyBytes() + stats.writebackBytes();
    }

    /** Waits for the end of one folio's writeback in any inode; false if none was under writeback. */
    private boolean waitForSomeWriteback() {
        for (CachedInode inode : inodes.values()) {
            if (inode.pageCache().waitForSomeWriteback()) {
                return true;
            }
        }
        return false;
    }

    Reclaim reclaim() {
        return reclaim;
    }

    /** The pool every inode's folios take their memory from. */
    FolioMemoryPool folioMemory() {
        return folioMemory;
    }

    /** Every inode's folios, in the order reclaim looks at them. */
    FolioLru folioLru() {
        return folioLru;
    }

    /**
     * The pool had no block at all for a new folio: reclaim clean folios down to the reclaim target
     * now, whoever else is reclaiming; while nothing is clean, wait for a folio's writeback to end
     * and try again (at most 100 times); only then does the allocation fall back to memory outside
     * the pool. The kernel's direct reclaim in {@code __alloc_pages_slowpath}
     * ({@code __alloc_pages_direct_reclaim}).
     */
    void reclaimForAllocation() {
        long target = (long) (options.cacheBudgetBytes() * Reclaim.TARGET_FRACTION);
        for (int round = 0; round < 100; round++) {
            if (reclaim.shrinkNow(target) > 0 || !waitForSomeWriteback()) {
                return;
            }
        }
    }

    /**
     * Where folio memory stands: the pool's reservation and use against the budget, and the overflow
     * allocations taken when nothing could be reclaimed. What the kernel reports in
     * {@code /proc/meminfo} ({@code meminfo_proc_show}); the overflow has no counterpart.
     *
     * @return a snapshot
     */
    public FolioMemoryStats memoryStats() {
        return new FolioMemoryStats(options.cacheBudgetBytes(), folioMemory.capacity(),
                folioMemory.reservedBytes(), folioMemory.inUseBytes(), folioMemory.overflowBytes(),
                folioMemory.overflowAllocations());
    }

    /** @return the counters so far, with the device's */
    public IoStats stats() {
        return stats.snapshot(device.stats());
    }

    /** @return where the cache stands now and how its reads fared (for monitoring) */
    public dev.iomap.api.CacheStatus cacheStatus() {
        return stats.status(options.cacheBudgetBytes());
    }

    /** @return bytes of folio memory cached */
    public long cachedBytes() {
        return stats.cachedBytes();
    }

    /** @return bytes in dirty folios */
    public long dirtyBytes() {
        return stats.dirtyBytes();
    }

    CacheStats statsCounters() {
        return stats;
    }

    /** @return what readahead did so far, over all files of this cache */
    public ReadaheadStats readaheadStats() {
        return stats.readahead();
    }

    /**
     * Waits until no background readahead is queued or running (tests, and benchmarks that want a
     * quiet device before they count).
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitReadahead() throws InterruptedException {
        readahead.awaitQuiet();
    }

    /**
     * Stops background readahead for good: queued windows are dropped (their folios stay to be read on
     * demand) and running ones finish (at most 10 seconds). A filesystem calls it before its adapter
     * unmounts, so that no readahead thread maps through the adapter afterwards. Idempotent; reads
     * still work, without readahead's background part.
     */
    public void stopReadahead() {
        readahead.shutdown();
    }

    ReadaheadPool readaheadPool() {
        return readahead;
    }

    /** Where ioends that completed asynchronously run their completion work. */
    ExecutorService completionExecutor() {
        return completions;
    }

    /**
     * Stops the flusher and background readahead, drops every folio after its writeback in flight (dirty ones too: call
     * {@link #syncAll()} first to keep them), gives the folio memory back and stops the completion
     * threads; the device stays open. An operation on one of its files afterwards fails.
     */
    @Override
    public void close() {
        flusher.stop();
        readahead.shutdown();
        for (CachedInode inode : inodes.values()) {
            inode.discardCache();
        }
        inodes.clear();
        completions.shutdown();
        folioMemory.close();
    }

    /**
     * At most {@link #COMPLETION_THREADS} threads, started as work arrives and gone after a minute idle
     * (an idle mount holds none); work beyond them waits in an unbounded queue, whose length is bounded
     * by the ioends in flight, themselves bounded by the dirty limit.
     */
    private static ThreadPoolExecutor completionPool(Thread.UncaughtExceptionHandler uncaught) {
        var pool = new ThreadPoolExecutor(COMPLETION_THREADS, COMPLETION_THREADS, 60, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), new CompletionThreads(uncaught));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /**
     * The cache's inodes as the page-cache layer's flusher and reclaim see them: mappings, each
     * written back through its {@link PageCache#aops()}.
     */
    private final class Domain implements WritebackDomain {
        @Override
        public PageCacheOptions options() {
            return options;
        }

        @Override
        public long dirtyBytes() {
            return IomapCache.this.dirtyBytes();
        }

        @Override
        public long cachedBytes() {
            return IomapCache.this.cachedBytes();
        }

        @Override
        public FolioLru folioLru() {
            return folioLru;
        }

        @Override
        public Reclaim reclaim() {
            return reclaim;
        }

        @Override
        public void forEachDirtyMapping(Predicate<PageCache> visitor) {
            forEachDirtyInode(inode -> visitor.test(inode.pageCache()));
        }

        @Override
        public void outOfMemory(OutOfMemoryError error) {
            IomapCache.this.outOfMemory(error);
        }
    }

    /** Daemon threads named {@code iomap-ioend-N}, like the kernel's ioend completion workqueue. */
    private static final class CompletionThreads implements java.util.concurrent.ThreadFactory {
        private final AtomicInteger count = new AtomicInteger();
        private final Thread.UncaughtExceptionHandler uncaught;

        CompletionThreads(Thread.UncaughtExceptionHandler uncaught) {
            this.uncaught = uncaught;
        }

        @Override
        public Thread newThread(Runnable task) {
            Thread thread = new Thread(task, "iomap-ioend-" + count.incrementAndGet());
            thread.setDaemon(true);
            thread.setUncaughtExceptionHandler(uncaught);
            return thread;
        }
    }
}
