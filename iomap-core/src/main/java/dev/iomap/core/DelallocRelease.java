package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.FolioState;
import dev.iomap.core.mm.PageCache;
import dev.iomap.spi.DelallocPunch;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Punching the delayed-allocation reservations a failed or short write left behind, only where the
 * cache is clean: the kernel's {@code iomap_write_delalloc_release} and its scan. All offsets are
 * {@code long}: the 2023 series fixed an overflow of {@code folio_next_index() << PAGE_SHIFT} here.
 */
final class DelallocRelease {
    private final IomapContext inode;
    private final List<long[]> punches = new ArrayList<>();
    private long punchStart;

    DelallocRelease(IomapContext inode) {
        this.inode = inode;
    }

    /**
     * Punches every clean block run of the unwritten part of a write (the kernel's
     * {@code iomap_write_delalloc_release}, starting at {@code iomap_last_written_block}, and its
     * {@code iomap_write_delalloc_scan}). See {@link dev.iomap.spi.IomapInode#releaseDelalloc}.
     */
    void release(long pos, long length, long written, DelallocPunch punch) throws IOException {
        long blockMask = inode.blockSize() - 1L;
        long start = written == 0 ? pos & ~blockMask : (pos + written + blockMask) & ~blockMask;
        long end = (pos + length + blockMask) & ~blockMask;
        if (start >= end) {
            return;
        }
        punchStart = start;
        PageCache cache = inode.pageCache();
        for (Folio folio : cache.foliosIn(start >>> cache.pageShift(), (end - 1) >>> cache.pageShift())) {
            folio.lock();
            try {
                if (!folio.isRemoved() && folio.isDirty()) {
                    keepDirtyBlocks(folio, Math.max(start, folio.pos()), Math.min(end, folio.end()));
                }
            } finally {
                folio.unlock();
            }
        }
        addPunch(end);
        for (long[] range : punches) {
            punch.punch(inode, range[0], range[1] - range[0]);
        }
    }

    /**
     * Removes the dirty blocks of {@code [from, to)} of a locked dirty folio from the punch (the
     * kernel's {@code iomap_write_delalloc_punch} and {@code iomap_write_delalloc_ifs_punch}).
     */
    private void keepDirtyBlocks(Folio folio, long from, long to) {
        FolioState state = folio.state();
        if (state == null) {
            addPunch(from);
            punchStart = to;
            return;
        }
        int limit = (int) (to - folio.pos());
        int offset = (int) (from - folio.pos());
        while (offset < limit) {
            int dirty = state.nextDirtyBlock(offset, limit);
            if (dirty < 0) {
                return;
            }
            int clean = Math.min(state.nextCleanBlock(dirty, limit), limit);
            addPunch(folio.pos() + dirty);
            punchStart = folio.pos() + clean;
            offset = clean;
        }
    }

    private void addPunch(long end) {
        if (end > punchStart) {
            punches.add(new long[] {punchStart, end});
        }
        punchStart = Math.max(punchStart, end);
    }
}
