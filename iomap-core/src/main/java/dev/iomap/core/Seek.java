package dev.iomap.core;

import dev.iomap.api.NoDataException;
import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.PageCache;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapRequest;
import java.io.IOException;
import java.util.EnumSet;
import java.util.Set;

/**
 * Seek data and seek hole: the kernel's {@code iomap_seek_data} and {@code iomap_seek_hole}
 * ({@code fs/iomap/seek.c}), with the page cache probe of {@code mapping_seek_hole_data}
 * ({@code mm/filemap.c}). Callers hold the inode lock shared.
 *
 * <p>The adapter is asked with {@link IomapRequest#REPORT} alone, one mapping at a time from the
 * offset to EOF. {@code MAPPED}, {@code DELALLOC} and {@code INLINE} are data. {@code UNWRITTEN} is a
 * hole except for the blocks the cache holds uptodate (the kernel's rule: even zeroes read from it
 * count). {@code HOLE} is a hole except for the blocks the cache holds dirty or under writeback: the
 * kernel never sees dirty data over a hole (a buffered write reserves first), but an adapter of this
 * core may allocate only at writeback, and data just written must not be reported as a hole. Where a
 * probe of the cache finds no data in a {@code HOLE} or {@code UNWRITTEN} mapping, the mapping is
 * checked with {@link dev.iomap.spi.WriteOps#valid} before the hole is believed: writeback and reclaim
 * run under a shared inode lock, and may have moved the data from the cache to new blocks since the
 * mapping was made.
 */
final class Seek {
    private static final Set<IomapRequest> REPORT = EnumSet.of(IomapRequest.REPORT);

    /** Which cached blocks are data over a mapping that is a hole on the device. */
    enum CachedData {
        /** Over a {@code HOLE}: blocks that are dirty, and every block of a folio under writeback. */
        DIRTY,
        /** Over an {@code UNWRITTEN} extent: blocks that are uptodate (the kernel's rule). */
        UPTODATE
    }

    private Seek() {
    }

    /**
     * The kernel's {@code iomap_seek_data}.
     *
     * @param inode the file, its inode lock held shared
     * @param pos the offset to seek from, at least 0
     * @return {@code pos} if it is in data, else the start of the next data
     * @throws NoDataException if {@code pos} is at or past EOF or only holes follow it
     * @throws IOException from the adapter
     */
    static long seekData(IomapContext inode, long pos) throws IOException {
        long size = inode.size();
        check("seek data", inode, pos, size);
        long found = seek(inode, pos, size, true);
        if (found < 0) {
            throw new NoDataException("seek data in inode " + inode.ino() + ": only holes from " + pos
                    + " to EOF (size " + size + ")");
        }
        return found;
    }

    /**
     * The kernel's {@code iomap_seek_hole}.
     *
     * @param inode the file, its inode lock held shared
     * @param pos the offset to seek from, at least 0
     * @return {@code pos} if it is in a hole, else the start of the next hole, at most EOF
     * @throws NoDataException if {@code pos} is at or past EOF
     * @throws IOException from the adapter
     */
    static long seekHole(IomapContext inode, long pos) throws IOException {
        long size = inode.size();
        check("seek hole", inode, pos, size);
        long found = seek(inode, pos, size, false);
        return found < 0 ? size : found;
    }

    /**
     * Walks the mappings from {@code pos} to EOF for the first byte of data ({@code data}) or of a
     * hole. An answer that rests on a hole (a hole found, or no data found in a mapping) is believed
     * only while the mapping is still valid; otherwise the range is looked up again.
     *
     * @return the offset found, or -1 if there is none before EOF
     */
    private static long seek(IomapContext inode, long pos, long size, boolean data) throws IOException {
        IomapIter iter = new IomapIter(inode, inode.ops(), pos, size - pos, REPORT);
        long found = -1;
        try {
            while (iter.next()) {
                long start = iter.pos();
                CachedData rule = cachedData(iter.iomap());
                long hit = rule == null ? (data ? start : -1) : scan(inode, start, start + iter.length(), rule, data);
                boolean restsOnAHole = data ? hit < 0 : hit >= 0;
                if (restsOnAHole && !inode.writeOps().valid(inode, iter.iomap())) {
                    iter.markStale();
                } else if (hit >= 0) {
                    found = hit;      // nothing advanced: the next call ends the mapping and stops
                } else {
                    iter.advance(iter.length());
                }
            }
        } catch (IOException | RuntimeException e) {
            BufferedWrite.abort(iter, e);
            throw e;
        }
        return found;
    }

    private static void check(String what, IomapContext inode, long pos, long size) throws NoDataException {
        if (pos >= size) {
            throw new NoDataException(what + " in inode " + inode.ino() + ": offset " + pos
                    + " is at or past EOF (size " + size + ")");
        }
    }

    /** @return which cached blocks are data over the mapping, or null if all of it is data */
    private static CachedData cachedData(Iomap iomap) {
        return switch (iomap.type()) {
            case HOLE -> CachedData.DIRTY;
            case UNWRITTEN -> CachedData.UPTODATE;
            case MAPPED, DELALLOC, INLINE -> null;
        };
    }

    /**
     * The first offset of {@code [start, end)}, a range the adapter reports as a hole on the device,
     * that is data ({@code wantData}) or a hole by the cache's {@code rule}: {@code start} itself if
     * its block qualifies, else the start of the first block that does. An uncached page is a hole.
     * The kernel's {@code mapping_seek_hole_data} with its {@code folio_seek_hole_data}, which likewise
     * locks each folio to ask about its blocks.
     *
     * @return the offset, or -1 if there is none
     */
    static long scan(IomapContext inode, long start, long end, CachedData rule, boolean wantData) {
        PageCache cache = inode.pageCache();
        if (rule == CachedData.DIRTY && !cache.hasDirty() && !cache.hasWriteback()) {
            return wantData ? -1 : start;
        }
        long blockMask = -(long) inode.blockSize();
        long pos = start;
        while (pos < end) {
            Folio folio = cache.findFolio(pos >>> cache.pageShift());
            if (folio == null || folio.pos() >= end) {
                return wantData ? -1 : pos;
            }
            if (folio.pos() > pos) {
                if (!wantData) {
                    return pos;
                }
                pos = folio.pos();
            }
            folio.lock();
            try {
                if (folio.isRemoved()) {
                    continue;
                }
                long stop = Math.min(folio.end(), end);
                for (long block = pos & blockMask; block < stop; block += inode.blockSize()) {
                    if (holdsData(folio, (int) (block - folio.pos()), inode.blockSize(), rule) == wantData) {
                        return Math.max(pos, block);
                    }
                }
                pos = stop;
            } finally {
                folio.unlock();
            }
        }
        return -1;
    }

    /** Whether a block of a locked folio is data by {@code rule}. */
    private static boolean holdsData(Folio folio, int offset, int blockSize, CachedData rule) {
        return switch (rule) {
            case DIRTY -> folio.isWriteback()
                    || (folio.isDirty() && (folio.state() == null || folio.state().isBlockDirty(offset)));
            case UPTODATE -> folio.isRangeUptodate(offset, blockSize);
        };
    }
}
