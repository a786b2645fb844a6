package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.FolioOrder;
import dev.iomap.core.mm.FolioState;
import dev.iomap.core.mm.PageCache;
import dev.iomap.core.mm.ReadaheadState;
import dev.iomap.core.trace.ReadpageEvent;
import dev.iomap.spi.Iomap;
import dev.iomap.api.IomapException;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Set;

/**
 * The read path: the kernel's {@code iomap_read_folio}, {@code iomap_readahead} and
 * {@code filemap_read}. Only blocks that are not uptodate are read; holes, unwritten and delalloc
 * extents, new blocks and blocks past EOF are zero-filled in memory; inline data is copied.
 */
final class BufferedRead {
    private static final Set<IomapRequest> NO_FLAGS = Set.of();
    private static final Set<IomapRequest> NOWAIT = Set.of(IomapRequest.NOWAIT);
    private final IomapContext inode;
    private final Readahead readahead;

    BufferedRead(IomapContext inode) {
        this.inode = inode;
        this.readahead = new Readahead(inode);
    }

    /**
     * Copies file data at {@code pos} into {@code dst}, up to EOF, reading ahead as {@code ra} says.
     * Caller holds the inode lock shared. The kernel's {@code filemap_read}.
     *
     * @param ra the open file's readahead state
     * @param uncached whether this is an uncached read ({@code RWF_DONTCACHE}): it reads no further
     *     ahead than it copies, the folios it brings into the cache leave it once copied from, and the
     *     folios cached before it stay
     * @return bytes read, or -1 if {@code pos} is at or past EOF and {@code dst} has room
     */
    int read(long pos, ByteBuffer dst, ReadaheadState ra, boolean uncached) throws IOException {
        long size = inode.size();
        if (!dst.hasRemaining()) {
            return 0;
        }
        if (pos >= size) {
            return -1;
        }
        long end = Math.min(size, pos + dst.remaining());
        long p = pos;
        boolean missed = false;
        while (p < end) {
            Folio folio = cachedFolio(p, end - p, ra, uncached);
            if (folio == null) {
                if (!missed && !uncached) {
                    // once per read, as filemap_get_pages calls page_cache_sync_ra for the whole
                    // request; it adds folios only past the request, which this read fills itself
                    missed = true;
                    int shift = inode.pageCache().pageShift();
                    readahead.onMiss(ra, p >>> shift, ((end - 1) >>> shift) - (p >>> shift) + 1);
                }
                folio = readNewFolio(p, end - p, uncached);
            }
            try {
                int offset = (int) (p - folio.pos());
                int n = (int) Math.min(end - p, folio.size() - offset);
                if (dst.isReadOnly()) {
                    MemorySegment.copy(folio.memory(), offset, MemorySegment.ofBuffer(dst), 0, n);
                } else {
                    // one absolute bulk get through the folio's copy view: no allocation per read
                    dst.put(dst.position(), folio.copyView(), folio.copyIndex(offset), n);
                }
                dst.position(dst.position() + n);
                p += n;
            } finally {
                if (uncached) {
                    inode.pageCache().endDropBehind(folio);
                }
                folio.put();
            }
        }
        int total = (int) (end - pos);
        ra.readEnded((end - 1) >>> inode.pageCache().pageShift());
        inode.stats().appRead(total);
        return total;
    }

    /**
     * The cached folio holding {@code pos}, with at least the bytes the caller wants uptodate and a
     * reference held for the caller, who copies out of it without its lock and then {@link Folio#put}s
     * it: the kernel's {@code filemap_get_pages}, one folio at a time (its
     * {@code filemap_get_read_batch} takes the same references). A folio carrying the readahead
     * marker starts the next window first; a cached folio that is not uptodate is locked (waiting
     * only if background readahead is reading it now) and read here.
     *
     * <p>A cached read takes the drop-behind mark off the folio, an uncached one leaves it and
     * starts no readahead (the kernel's {@code __filemap_get_folio} without {@code FGP_DONTCACHE}
     * clears it).
     *
     * @return the folio, or null if the page is not cached
     */
    private Folio cachedFolio(long pos, long wanted, ReadaheadState ra, boolean uncached) throws IOException {
        PageCache cache = inode.pageCache();
        Folio cached = cache.lookup(pos >>> cache.pageShift());
        if (cached == null) {
            return null;
        }
        if (!uncached) {
            if (cached.isDropBehind()) {
                cached.testClearDropBehind();
            }
            if (cached.testClearReadahead()) {
                readahead.onMarker(ra, cached);
            }
        }
        if (cached.tryGet()) {
            int offset = (int) (pos - cached.pos());
            int n = (int) Math.min(wanted, cached.size() - offset);
            if (cached.isRangeUptodate(offset, n)) {
                cached.touch();
                inode.stats().readHit();
                return cached;
            }
            cached.put();
        }
        return readNewFolio(pos, wanted, false);
    }

    /**
     * The folio holding {@code pos}, created if missing as large as {@code wanted} allows (with order
     * hints on), locked, made uptodate and returned with a reference for the caller: the kernel's
     * {@code filemap_create_folio} and {@code filemap_update_page}. With {@code dropBehind} (an
     * uncached read that found the page not cached) a folio that is not uptodate when locked is marked
     * {@link Folio#setDropBehind drop-behind}.
     */
    private Folio readNewFolio(long pos, long wanted, boolean dropBehind) throws IOException {
        inode.stats().readMiss();
        PageCache cache = inode.pageCache();
        long index = pos >>> cache.pageShift();
        int order = cache.options().orderHints() ? FolioOrder.hint(wanted, cache.pageShift()) : 0;
        Folio folio = cache.grabLocked(index, order);
        if (dropBehind && !folio.isUptodate()) {
            folio.setDropBehind();
        }
        try {
            readFolio(folio);
            if (!folio.tryGet()) {
                throw new IllegalStateException("a locked folio in the cache has no reference: " + folio);
            }
            return folio;
        } finally {
            folio.unlock();
        }
    }

    /**
     * Makes a locked folio fully uptodate, reading only the blocks that are not: the kernel's
     * {@code iomap_read_folio}, with the walk over runs of blocks not uptodate that its
     * {@code iomap_adjust_read_range} does.
     *
     * @param folio a locked folio
     */
    void readFolio(Folio folio) throws IOException {
        ReadpageEvent.emit(inode, 1 << folio.order());
        readFolio(folio, NO_FLAGS);
    }

    /**
     * As {@link #readFolio(Folio)}, for readahead: the mappings are asked for with
     * {@link IomapRequest#NOWAIT}, so that an adapter that would wait for a lock fails at once instead
     * of waiting with the folio locked (see there).
     *
     * @param folio a locked folio
     * @throws IOException also when the adapter would have waited
     */
    void readaheadFolio(Folio folio) throws IOException {
        readFolio(folio, NOWAIT);
    }

    private void readFolio(Folio folio, Set<IomapRequest> request) throws IOException {
        if (folio.isUptodate()) {
            return;
        }
        FolioState state = folio.stateForUpdate();
        int offset = 0;
        while (offset < folio.size()) {
            int start = state == null ? 0 : state.nextNotUptodateBlock(offset, folio.size());
            if (start >= folio.size()) {
                break;
            }
            int stop = state == null ? folio.size() : state.nextUptodateBlock(start, folio.size());
            if (stop < 0) {
                stop = folio.size();
            }
            readRange(folio, start, stop - start, request);
            offset = stop;
        }
        if (state == null || state.isFullyUptodate()) {
            folio.markUptodate();
        }
    }

    /**
     * Fills {@code [offset, offset + length)} of a locked folio through the adapter's mappings (the
     * kernel's {@code iomap_read_folio_iter}, was {@code iomap_readpage_iter}).
     */
    private void readRange(Folio folio, int offset, int length, Set<IomapRequest> request) throws IOException {
        long pos = folio.pos() + offset;
        long size = inode.size();
        IomapIter iter = new IomapIter(inode, inode.ops(), pos, length, request);
        try {
            while (iter.next()) {
                int from = (int) (iter.pos() - folio.pos());
                int n = (int) iter.length();
                fill(folio, from, n, iter.iomap(), size);
                iter.advance(n);
            }
        } catch (IOException | RuntimeException e) {
            BufferedWrite.abort(iter, e);
            throw e;
        }
    }

    /**
     * Fills one mapping's part of a locked folio: copies inline data, zeroes what reads as zeroes,
     * reads the rest (the kernel's {@code iomap_read_folio_iter}, was {@code iomap_readpage_iter}).
     */
    private void fill(Folio folio, int from, int length, Iomap iomap, long size) throws IOException {
        long pos = folio.pos() + from;
        long beforeEof = Math.max(0, Math.min(length, size - pos));
        beforeEof = (beforeEof + inode.blockSize() - 1) & -inode.blockSize();
        beforeEof = Math.min(beforeEof, length);
        if (iomap.type() == IomapType.INLINE) {
            copyInline(folio, from, length, iomap);
        } else if (iomap.needsZeroing() || beforeEof == 0) {
            folio.memory().asSlice(from, length).fill((byte) 0);
        } else {
            readBlocks(folio, from, (int) beforeEof, iomap);
            if (beforeEof < length) {
                folio.memory().asSlice(from + beforeEof, length - beforeEof).fill((byte) 0);
            }
        }
        markUptodate(folio, from, length);
    }

    /**
     * Reads whole blocks of a locked folio through the adapter's {@code ReadOps} (from the device by
     * default) and marks them uptodate: the kernel's
     * {@code iomap_bio_read_folio_range_sync} (was {@code iomap_read_folio_range}, and before that
     * {@code iomap_read_folio_sync}).
     *
     * @param folio a locked folio
     * @param offset byte offset inside the folio, block aligned
     * @param length bytes, block aligned
     * @param iomap a {@code MAPPED} mapping containing the range
     */
    void readBlocks(Folio folio, int offset, int length, Iomap iomap) throws IOException {
        long pos = folio.pos() + offset;
        if (iomap.type() != IomapType.MAPPED || pos + length > iomap.end()) {
            throw new IomapException("cannot read file range [" + pos + ", +" + length + ") of inode "
                    + inode.ino() + " through " + iomap);
        }
        ByteBuffer dst = folio.buffer(offset, length);
        inode.ops().readOps().readFolioRange(inode, iomap, pos, dst, inode.device());
        if (dst.hasRemaining()) {
            throw new IomapException("the adapter's readFolioRange left " + dst.remaining() + " of " + length
                    + " bytes at " + pos + " of inode " + inode.ino() + " unread");
        }
        markUptodate(folio, offset, length);
    }

    /**
     * Marks a range of a locked folio uptodate (the kernel's {@code iomap_set_range_uptodate}, and what
     * its {@code iomap_finish_folio_read} does when a read completes).
     */
    private void markUptodate(Folio folio, int offset, int length) {
        FolioState state = folio.state();
        if (state == null) {
            if (offset == 0 && length == folio.size()) {
                folio.markUptodate();
            }
            return;
        }
        if (state.setRangeUptodate(offset, length)) {
            folio.markUptodate();
        }
    }

    /**
     * Copies inline data into a locked folio and zeroes the rest of it; the folio becomes uptodate (the
     * kernel's {@code iomap_read_inline_data}, which {@code iomap_write_begin_inline} calls).
     */
    void fillInline(Folio folio, Iomap iomap) throws IOException {
        copyInline(folio, 0, folio.size(), iomap);
        folio.markUptodate();
        FolioState state = folio.state();
        if (state != null) {
            state.setRangeUptodate(0, folio.size());
        }
    }

    /**
     * Copies the inline bytes below EOF into part of a locked folio and zeroes the rest of that part
     * (the kernel's {@code iomap_read_inline_data}, which copies {@code i_size - iomap->offset} bytes
     * and zeroes the folio's tail). {@link IomapIter} has checked that the mapping starts at 0, lies in
     * the first page and reaches EOF.
     */
    private void copyInline(Folio folio, int from, int length, Iomap iomap) throws IOException {
        if (folio.pos() != 0 || iomap.offset() != 0) {
            throw new IomapException("inline data must start at file offset 0, got " + iomap + " for folio at "
                    + folio.pos() + " of inode " + inode.ino());
        }
        long valid = Math.min(inode.size(), iomap.end());
        int available = (int) Math.max(0, Math.min(length, valid - from));
        MemorySegment.copy(MemorySegment.ofArray(iomap.inlineData()), from, folio.memory(), from, available);
        folio.memory().asSlice(from + available, length - available).fill((byte) 0);
    }

    /**
     * Copies bytes of a locked, uptodate folio into an inline mapping's buffer: the kernel's
     * {@code iomap_write_end_inline}. The adapter persists the buffer in {@code IomapOps.end}.
     *
     * @param folio the folio at file offset 0
     * @param offset byte offset inside the folio (= file offset)
     * @param length bytes, within the mapping
     * @param iomap an {@code INLINE} mapping checked by {@link IomapIter}
     */
    static void writeThroughInline(Folio folio, int offset, int length, Iomap iomap) throws IomapException {
        if (folio.pos() != 0 || offset + (long) length > iomap.end()) {
            throw new IomapException("cannot write file range [" + (folio.pos() + offset) + ", +" + length
                    + ") through " + iomap);
        }
        MemorySegment.copy(folio.memory(), offset, MemorySegment.ofArray(iomap.inlineData()), offset, length);
    }
}
