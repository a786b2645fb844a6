package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.FolioState;
import dev.iomap.core.mm.PageCache;
import dev.iomap.core.trace.InvalidateFolioEvent;
import dev.iomap.core.trace.ReleaseFolioEvent;

/**
 * Dropping cached data: the kernel's {@code iomap_invalidate_folio}, {@code iomap_release_folio},
 * {@code truncate_inode_pages_range} and {@code truncate_pagecache_range}. {@link #invalidateFolio}
 * and {@link #releaseFolio} need the folio lock held; {@link #truncatePagecache} and
 * {@link #invalidateRange} take the folio locks themselves.
 */
final class Invalidate {

    private Invalidate() {
    }

    /**
     * Invalidates {@code [offset, offset + length)} of a locked folio that is not under writeback.
     * The whole folio: its dirty state is cancelled and its per-block state dropped. Part of it: the
     * blocks the range covers completely stop being dirty; the rest stay dirty.
     *
     * <p>The kernel's {@code iomap_invalidate_folio}, as {@code folio_invalidate} calls it; it cancels
     * the dirty state of a whole folio with {@code folio_cancel_dirty} and ignores a partial
     * invalidation.
     *
     * @param folio a locked folio
     * @param offset byte offset inside the folio
     * @param length bytes
     */
    static void invalidateFolio(Folio folio, int offset, int length) {
        InvalidateFolioEvent.emit(folio.cache().host(), folio.pos() + offset, length, folio.order());
        if (offset == 0 && length >= folio.size()) {
            folio.clearDirtyForIo();
            folio.dropState();
            return;
        }
        if (!folio.isDirty()) {
            return;
        }
        FolioState state = folio.stateForUpdate();
        if (state == null) {
            return;
        }
        state.clearRangeDirty(offset, length);
        if (!state.isAnyDirty()) {
            folio.clearDirtyForIo();
        }
    }

    /**
     * Lets a clean folio go: drops its per-block state. A dirty folio is refused, since its state
     * says which blocks need writing; so is one under writeback. The kernel's
     * {@code iomap_release_folio}, with the writeback check {@code filemap_release_folio} makes first.
     *
     * @param folio a locked folio
     * @return whether the folio may be removed from the cache
     */
    static boolean releaseFolio(Folio folio) {
        if (folio.isDirty() || folio.isWriteback()) {
            return false;
        }
        ReleaseFolioEvent.emit(folio.cache().host(), folio.pos(), folio.size(), folio.order());
        folio.dropState();
        return true;
    }

    /**
     * Removes every folio past {@code newSize} and zeroes and partially invalidates the one
     * straddling it (the kernel's {@code truncate_inode_partial_folio}). Waits for writeback of
     * each folio it touches. The kernel's {@code truncate_pagecache} (as {@code truncate_setsize}
     * calls it), through {@code truncate_inode_pages_range}.
     *
     * @param inode the file, whose inode lock the caller holds exclusively
     * @param newSize the new size
     */
    static void truncatePagecache(IomapContext inode, long newSize) {
        PageCache cache = inode.pageCache();
        long firstIndex = newSize >>> cache.pageShift();
        for (Folio folio : cache.foliosIn(firstIndex, Long.MAX_VALUE >>> cache.pageShift())) {
            if (folio.end() <= newSize) {
                continue;
            }
            folio.lock();
            try {
                if (folio.isRemoved()) {
                    continue;
                }
                folio.waitWriteback();
                if (folio.pos() >= newSize) {
                    invalidateFolio(folio, 0, folio.size());
                    cache.remove(folio);
                    continue;
                }
                int keep = (int) (newSize - folio.pos());
                folio.memory().asSlice(keep, folio.size() - keep).fill((byte) 0);
                invalidateFolio(folio, keep, folio.size() - keep);
            } finally {
                folio.unlock();
            }
        }
    }

    /**
     * Invalidates the cache over {@code [start, end)}: whole folios inside are removed (after their
     * writeback). A folio straddling an edge is removed whole if it is clean (its data is on the
     * device; we cannot split folios, and keeping it would keep stale bytes for the range), else it
     * has the range zeroed and partially invalidated (the kernel's {@code truncate_inode_partial_folio}).
     * Callers write back first if dirty data must survive. The kernel's
     * {@code truncate_pagecache_range}.
     *
     * @param inode the file
     * @param start first byte
     * @param end first byte past the range
     */
    static void invalidateRange(IomapContext inode, long start, long end) {
        PageCache cache = inode.pageCache();
        if (end <= start) {
            return;
        }
        for (Folio folio : cache.foliosIn(start >>> cache.pageShift(), (end - 1) >>> cache.pageShift())) {
            folio.lock();
            try {
                if (folio.isRemoved()) {
                    continue;
                }
                folio.waitWriteback();
                long from = Math.max(start, folio.pos());
                long to = Math.min(end, folio.end());
                boolean whole = from == folio.pos() && to == folio.end();
                if (whole || !folio.isDirty()) {
                    invalidateFolio(folio, 0, folio.size());
                    cache.remove(folio);
                } else {
                    int offset = (int) (from - folio.pos());
                    folio.memory().asSlice(offset, to - from).fill((byte) 0);
                    invalidateFolio(folio, offset, (int) (to - from));
                }
            } finally {
                folio.unlock();
            }
        }
    }
    /**
     * Removes every clean folio of the file after waiting for its writeback, and keeps the dirty ones:
     * the body of {@link CachedInode#invalidateCache}. Takes folio locks only (as {@link Reclaim} does),
     * not the inode lock.
     *
     * @param inode the file
     * @return the pages removed and, if any folio was dirty, the first dirty folio's offset
     */
    static CacheDrop dropCleanFolios(IomapContext inode) {
        PageCache cache = inode.pageCache();
        int shift = cache.pageShift();
        long dropped = 0;
        long dirtyPages = 0;
        long firstDirty = -1;
        for (Folio folio : cache.foliosIn(0, Long.MAX_VALUE >>> shift)) {
            folio.lock();
            try {
                if (folio.isRemoved()) {
                    continue;
                }
                folio.waitWriteback();
                if (folio.isDirty()) {
                    dirtyPages += folio.size() >>> shift;
                    firstDirty = firstDirty < 0 ? folio.pos() : Math.min(firstDirty, folio.pos());
                    continue;
                }
                invalidateFolio(folio, 0, folio.size());
                cache.remove(folio);
                dropped += folio.size() >>> shift;
            } finally {
                folio.unlock();
            }
        }
        return new CacheDrop(dropped, dirtyPages, firstDirty);
    }

    /**
     * What {@link #dropCleanFolios} did.
     *
     * @param droppedPages pages removed
     * @param dirtyPages dirty pages kept
     * @param firstDirtyOffset the file offset of the first dirty folio kept, -1 if none
     */
    record CacheDrop(long droppedPages, long dirtyPages, long firstDirtyOffset) {
    }
}
