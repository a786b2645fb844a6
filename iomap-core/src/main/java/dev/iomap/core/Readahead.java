package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.PageCache;
import dev.iomap.core.mm.ReadaheadPool;
import dev.iomap.core.mm.ReadaheadState;
import dev.iomap.core.trace.ReadaheadEvent;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * On-demand readahead of one file: the kernel's {@code page_cache_sync_ra},
 * {@code page_cache_async_ra} and {@code page_cache_ra_unbounded}, with {@code iomap_readahead}'s
 * reading of each folio through the adapter's mappings.
 *
 * <p>A read miss asks {@link ReadaheadState#onMiss} whether it looks sequential; if so the reader
 * reads what it needs itself, as before (one folio as large as the read allows at a time), and the
 * rest of the window is inserted here as new, unlocked, not uptodate folios (as large as their
 * alignment and the window allow: large folios, so each is one device read per contiguous mapped
 * run) and handed to the cache's {@link ReadaheadPool} in pieces of about {@link #TASK_BYTES}, which its
 * threads read at once. The folio at the window's marker carries the
 * readahead flag; a reader reaching it starts the next window ({@link ReadaheadState#onMarker}), so
 * the device reads the next window while the reader copies this one.
 *
 * <p>Correctness: folios are only ever added where nothing is cached (a dirty or uptodate folio is
 * never touched), never past the page holding EOF, and the background task reads a folio only if it
 * gets the inode lock shared without waiting (so no truncate, write or hole punch runs meanwhile, and
 * the adapter maps under the lock as for any read) and the folio lock without waiting, and finds the
 * folio still in the cache, not uptodate and without per-block state (nobody wrote or read into it
 * first). A reader that needs a folio the task has not read yet locks it and reads it itself; it
 * waits only for a folio the task is reading now. A folio the task could not read stays not
 * uptodate and is read on demand, where any error reaches the reader.
 */
final class Readahead {
    /**
     * Bytes of folios one background task reads, at least (a larger folio is one task): 1 MiB, so that
     * a window of large folios is read by all of the pool's threads at once, and one of small folios is
     * not a task per page.
     */
    static final long TASK_BYTES = 1 << 20;

    private final IomapContext inode;

    Readahead(IomapContext inode) {
        this.inode = inode;
    }

    /**
     * @return the largest window in pages, 0 if readahead is off: {@code maxReadaheadBytes}, but at
     *     most an eighth of the cache budget, so that a small cache does not reclaim a window before
     *     its reader gets to it
     */
    private long maxPages() {
        PageCache cache = inode.pageCache();
        long bytes = Math.min(cache.options().maxReadaheadBytes(), cache.options().cacheBudgetBytes() / 8);
        return bytes >>> cache.pageShift();
    }

    /**
     * A read miss at page {@code index}; the caller, holding the inode lock shared, then reads the
     * {@code reqPages} it needs itself.
     *
     * @param ra the open file's state
     * @param index page of the miss
     * @param reqPages pages the read still needs from {@code index}, at least 1
     */
    void onMiss(ReadaheadState ra, long index, long reqPages) {
        long max = maxPages();
        if (max == 0) {
            return;
        }
        ReadaheadState.Window window = ra.onMiss(index, reqPages, max);
        if (window == null) {
            inode.stats().readaheadRandomMiss();
            return;
        }
        inode.stats().readaheadWindow(false);
        start(window);
    }

    /**
     * A reader, holding the inode lock shared, reached {@code folio}, whose readahead flag it has just
     * cleared.
     *
     * @param ra the open file's state
     * @param folio the marked folio
     */
    void onMarker(ReadaheadState ra, Folio folio) {
        long max = maxPages();
        if (max == 0) {
            return;
        }
        inode.stats().readaheadWindow(true);
        start(ra.onMarker(folio.index(), 1L << folio.order(), max));
    }

    /**
     * Inserts the window's missing folios, up to the page holding EOF, and hands them to the pool (the
     * kernel's {@code page_cache_ra_unbounded}).
     */
    private void start(ReadaheadState.Window window) {
        PageCache cache = inode.pageCache();
        long eofPages = (inode.size() + cache.options().pageSize() - 1) >>> cache.pageShift();
        // Whole minimum-order folios: the start rounded down and the end up to the minimum order
        // (page_cache_ra_unbounded's mapping_align_index and its min_nrpages steps), so a folio
        // may reach past EOF by less than a block, as the block holding EOF does.
        long minPages = 1L << cache.minOrder();
        long end = Math.min(window.end(), eofPages);
        end = (end + minPages - 1) & -minPages;
        List<Folio> added = new ArrayList<>();
        long index = cache.alignIndex(window.start());
        while (index < end) {
            Folio cached = cache.lookup(index);
            if (cached != null) {
                index = cached.index() + (1L << cached.order());
                continue;
            }
            Folio folio = cache.addForReadahead(index, orderFor(index, end));
            if (folio == null) {
                if (cache.lookup(index) != null) {
                    continue;
                }
                break;
            }
            long pages = 1L << folio.order();
            if (window.marker() >= folio.index() && window.marker() < folio.index() + pages) {
                folio.markReadahead();
            }
            added.add(folio);
            inode.stats().readaheadAdded(folio.size());
            index = folio.index() + pages;
        }
        ReadaheadEvent.emit(inode, added);
        submit(added);
    }

    /**
     * Hands the window's folios to the pool in tasks of at least {@link #TASK_BYTES} each (one folio
     * where folios are that large), in file order: the pool's threads then read consecutive pieces of one
     * window at once, so a sequential reader has {@link ReadaheadPool#THREADS} device reads working for
     * it rather than one.
     */
    private void submit(List<Folio> added) {
        int from = 0;
        long bytes = 0;
        for (int i = 0; i < added.size(); i++) {
            bytes += added.get(i).size();
            if (bytes >= TASK_BYTES || i == added.size() - 1) {
                inode.readaheadPool().submit(new ReadTask(List.copyOf(added.subList(from, i + 1))));
                from = i + 1;
                bytes = 0;
            }
        }
    }

    /**
     * The largest order a readahead folio at {@code index} may have: aligned, inside the window, and
     * at least the mapping's minimum order ({@code page_cache_ra_order}'s {@code max(new_order,
     * min_order)}); {@code index} and {@code end} are multiples of the minimum order's pages, so the
     * minimum always fits.
     */
    private int orderFor(long index, long end) {
        PageCache cache = inode.pageCache();
        int order = Math.min(cache.maxOrder(), 63 - Long.numberOfLeadingZeros(end - index));
        return cache.orderAt(index, order);
    }

    /**
     * Reads the folios of one window in the background. It holds no reference while queued, so
     * reclaim can drop a folio it has not read yet and get the memory back at once; it takes one
     * while it reads each folio, and skips a folio already released.
     */
    private final class ReadTask implements ReadaheadPool.Task {
        private final List<Folio> folios;

        ReadTask(List<Folio> folios) {
            this.folios = folios;
        }

        @Override
        public void run() {
            if (!inode.tryLockShared()) {
                // a truncate, write or punch holds the inode: leave the folios to be read on demand
                abandon();
                return;
            }
            try {
                for (Folio folio : folios) {
                    if (!folio.tryGet()) {
                        inode.stats().readaheadSkipped();
                        continue;
                    }
                    try {
                        read(folio);
                    } finally {
                        folio.put();
                    }
                }
            } finally {
                inode.unlockShared();
            }
        }

        private void read(Folio folio) {
            if (!folio.tryLock()) {
                inode.stats().readaheadSkipped();
                return;
            }
            try {
                if (folio.isRemoved() || folio.isUptodate() || folio.state() != null
                        || folio.pos() >= inode.size()) {
                    inode.stats().readaheadSkipped();
                    return;
                }
                inode.reader().readaheadFolio(folio);
                inode.stats().readaheadRead(folio.size());
            } catch (IOException | RuntimeException e) {
                // Readahead is a hint: the folio stays not uptodate, and the reader that needs it
                // reads it again and gets the error (the kernel's iomap_read_end_io leaves it so).
                // So does an adapter that would have waited for a lock (NOWAIT).
                inode.stats().readaheadSkipped();
            } finally {
                folio.unlock();
            }
        }

        @Override
        public void abandon() {
            for (int i = 0; i < folios.size(); i++) {
                inode.stats().readaheadSkipped();
            }
        }
    }
}
