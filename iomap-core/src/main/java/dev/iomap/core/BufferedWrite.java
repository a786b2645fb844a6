package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.FolioOrder;
import dev.iomap.core.mm.FolioState;
import dev.iomap.core.mm.PageCache;
import dev.iomap.core.trace.ZeroIterEvent;
import dev.iomap.api.BadAddressException;
import dev.iomap.api.IomapException;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WriteOps;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The buffered write path: the kernel's {@code iomap_file_buffered_write}, {@code iomap_write_begin}
 * and {@code iomap_write_end}, and the paths built on them: {@code iomap_zero_range} and
 * {@code iomap_file_unshare}. Callers hold the inode lock exclusively. One instance per call.
 */
final class BufferedWrite {
    private static final Set<IomapRequest> WRITE = EnumSet.of(IomapRequest.WRITE);
    private static final Set<IomapRequest> ZERO = EnumSet.of(IomapRequest.ZERO);
    private static final Set<IomapRequest> UNSHARE = EnumSet.of(IomapRequest.WRITE, IomapRequest.UNSHARE);
    private static final CopySource ZEROES = (dst, offset, length) -> {
        dst.asSlice(offset, length).fill((byte) 0);
        return length;
    };
    /** Unshare copies nothing: write_begin already read every block of the range. */
    private static final CopySource KEEP = (dst, offset, length) -> length;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private final IomapContext inode;
    /** The write path's iterator, reused write after write (writes hold the inode lock exclusively). */
    private final IomapIter reusableIter;
    /** Whether {@link #reusableIter} is in use (a nested write, should one happen, gets its own). */
    private boolean iterating;
    private boolean sourceFailed;
    /** Bytes the last copy copied that write_end then refused (a short copy into a folio not uptodate). */
    private int refusedCopy;
    /** A fault that escaped the source's copy (one that does not count how far it got). */
    private Throwable escapedFault;
    /** Whether the write running is uncached ({@code RWF_DONTCACHE}): the folios it creates are marked drop-behind. */
    private boolean dropBehind;
    /** What {@code putFolio} is shown, folio after folio. */
    private final CopiedBlocks copied = new CopiedBlocks();

    BufferedWrite(IomapContext inode) {
        this.inode = inode;
        this.reusableIter = new IomapIter(inode, inode.ops(), 0, 0, WRITE);
    }

    /**
     * Writes {@code length} bytes from {@code src} at {@code pos}, first zeroing the gap between
     * EOF and {@code pos} if the write starts past EOF: the kernel's {@code iomap_file_buffered_write}
     * (after xfs' {@code xfs_file_write_zero_eof}).
     *
     * @return bytes written; fewer than {@code length} only after a short copy
     * @throws BadAddressException if reading the source faulted before any byte was written (the
     *     kernel's EFAULT): the adapter's {@code end} was told nothing was written
     */
    long write(long pos, CopySource src, long length) throws IOException {
        return write(pos, src, length, false);
    }

    /**
     * As {@link #write(long, CopySource, long)}; an {@code uncached} write ({@code RWF_DONTCACHE}, the
     * kernel's {@code IOMAP_DONTCACHE}) marks the folios it creates {@link Folio#setDropBehind
     * drop-behind}, so that they leave the cache once written back. Folios cached before it stay.
     */
    long write(long pos, CopySource src, long length, boolean uncached) throws IOException {
        sourceFailed = false;
        escapedFault = null;
        long size = inode.size();
        if (pos > size) {
            zeroRange(size, pos - size);
        }
        dropBehind = uncached;
        long written;
        try {
            written = iterate(pos, length, WRITE, src);
        } finally {
            dropBehind = false;
        }
        Throwable fault = escapedFault != null ? escapedFault : src.fault();
        if (written == 0 && fault != null) {
            throw new BadAddressException("write of " + length + " bytes at " + pos + " to inode " + inode.ino()
                    + ": reading the source faulted before the first byte was written", fault);
        }
        return written;
    }

    /**
     * Zeroes {@code [pos, pos + length)} through the cache: the kernel's {@code iomap_zero_range} with
     * the folio batch of Linux 6.19. Mapped and delalloc blocks are zeroed through write_begin and
     * write_end. Over an unwritten extent the device reads as zeroes already, but cached data not yet
     * written back does not: the folios there that are dirty or under writeback are zeroed in the
     * cache (and stay dirty, so writeback puts the zeroes where the data would have gone), the rest of
     * the extent is skipped, and nothing is written back. A hole is skipped, unless dirty or in-flight
     * folios lie over it (data the adapter allocates only at writeback): then the rest of the range is
     * written back once and mapped again (the kernel's {@code iomap_zero_iter_flush_and_stale}), so
     * that the data is zeroed where it has landed.
     */
    void zeroRange(long pos, long length) throws IOException {
        if (length <= 0) {
            return;
        }
        // Taken before the first mapping, under the inode lock held exclusively: no folio becomes
        // dirty meanwhile, and one that leaves this list by finishing writeback has had its extent
        // converted first, so the mapping asked for after the list never shows it as unwritten.
        PageCache cache = inode.pageCache();
        List<Folio> dirty = cache.dirtyFoliosIn(pos >>> cache.pageShift(), (pos + length - 1) >>> cache.pageShift());
        int next = 0;
        boolean flushed = false;
        IomapIter iter = new IomapIter(inode, inode.ops(), pos, length, ZERO);
        try {
            while (iter.next()) {
                IomapType type = iter.srcmap().type();
                if (type == IomapType.UNWRITTEN) {
                    next = zeroDirtyFolios(iter, dirty, next);
                } else if (type == IomapType.HOLE) {
                    if (!flushed && overlapsDirty(iter, dirty, next)) {
                        flushed = true;
                        inode.writeAndWait(iter.pos(), pos + length);
                        iter.markStale();
                    } else {
                        iter.advance(iter.length());
                    }
                } else {
                    ZeroIterEvent.emit(inode, iter.pos(), iter.length());
                    writeIter(iter, ZEROES, false, Long.MAX_VALUE);
                }
            }
        } catch (IOException | RuntimeException e) {
            abort(iter, e);
            throw e;
        }
    }

    /**
     * @return whether a folio of {@code dirty} from {@code first} on that is dirty or under writeback
     *     now overlaps the current mapping
     */
    private static boolean overlapsDirty(IomapIter iter, List<Folio> dirty, int first) {
        long end = iter.pos() + iter.length();
        for (int i = first; i < dirty.size() && dirty.get(i).pos() < end; i++) {
            Folio folio = dirty.get(i);
            if (folio.end() > iter.pos() && (folio.isDirty() || folio.isWriteback())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Zeroes the parts of the current unwritten mapping that folios of {@code dirty} cover,
     * folio by folio in file order, and skips the rest of the mapping (the kernel's
     * {@code iomap_zero_iter} over the batch {@code iomap_fill_dirty_folios} collected). If the
     * mapping went stale, returns with the rest of it not advanced.
     *
     * @param dirty the folios that were dirty or under writeback, in file order
     * @param first the first of them that may overlap the mapping
     * @return the first of them the next mapping may overlap
     */
    private int zeroDirtyFolios(IomapIter iter, List<Folio> dirty, int first) throws IOException {
        long end = iter.pos() + iter.length();
        int i = first;
        for (; i < dirty.size() && dirty.get(i).pos() < end; i++) {
            Folio folio = dirty.get(i);
            long start = Math.max(folio.pos(), iter.pos());
            long stop = Math.min(folio.end(), end);
            if (stop <= start) {
                continue;
            }
            iter.advance(start - iter.pos());
            ZeroIterEvent.emit(inode, start, stop - start);
            writeIter(iter, ZEROES, false, stop);
            if (iter.pos() < stop) {
                return i;
            }
            if (folio.end() > end) {
                return i;
            }
        }
        iter.advance(iter.length());
        return i;
    }

    /**
     * Copies shared (reflinked) blocks in the range to the adapter's copy-on-write destination by
     * reading them, even whole folios, and dirtying them: the kernel's {@code iomap_file_unshare}, with
     * the skip rule of {@code iomap_want_unshare_iter}.
     */
    void unshare(long pos, long length) throws IOException {
        rewrite(pos, length, UNSHARE, KEEP,
                iter -> !iter.iomap().has(IomapFlag.SHARED) || isZeroOnDisk(iter.srcmap()));
    }

    private static boolean isZeroOnDisk(Iomap srcmap) {
        return srcmap.type() == IomapType.HOLE || srcmap.type() == IomapType.UNWRITTEN;
    }

    /**
     * Runs {@code src} through write_begin/write_end over every mapping for which {@code skip} is
     * false (the kernel's {@code iomap_unshare_iter}).
     */
    private void rewrite(long pos, long length, Set<IomapRequest> request, CopySource src,
            Predicate<IomapIter> skip) throws IOException {
        IomapIter iter = new IomapIter(inode, inode.ops(), pos, length, request);
        try {
            while (iter.next()) {
                if (skip.test(iter)) {
                    iter.advance(iter.length());
                } else {
                    writeIter(iter, src, false, Long.MAX_VALUE);
                }
            }
        } catch (IOException | RuntimeException e) {
            abort(iter, e);
            throw e;
        }
    }

    private long iterate(long pos, long length, Set<IomapRequest> request, CopySource src)
            throws IOException {
        IomapIter iter;
        boolean reused = !iterating;
        if (reused) {
            iter = reusableIter;
            iter.reset(inode.ops(), pos, length, request);
            iterating = true;
        } else {
            iter = new IomapIter(inode, inode.ops(), pos, length, request);
        }
        try {
            return iterate(iter, src);
        } finally {
            if (reused) {
                iterating = false;
            }
        }
    }

    private long iterate(IomapIter iter, CopySource src) throws IOException {
        long written = 0;
        try {
            while (iter.next()) {
                written += writeIter(iter, src, true, Long.MAX_VALUE);
                if (sourceFailed) {
                    iter.abort();
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            abort(iter, e);
            throw e;
        }
        return written;
    }

    static void abort(IomapIter iter, Exception failure) {
        try {
            iter.abort();
        } catch (IOException | RuntimeException suppressed) {
            failure.addSuppressed(suppressed);
        }
    }

    /**
     * Writes as much of the current mapping as the source gives, advancing the iterator by each
     * folio's accepted bytes as it goes (so that {@link IomapOps#end} learns them even if a later
     * folio fails), and marks the iterator stale if needed (the kernel's {@code iomap_write_iter},
     * with {@code iomap_trim_folio_range}, {@code iomap_iter_advance} and {@code __iomap_put_folio}).
     * Only an application write ({@code appWrite}) moves EOF and counts as bytes the application
     * wrote; zeroing and unsharing rewrite what is there.
     *
     * <p>A short copy that write_end refused (the folio was not uptodate) is written again at once
     * over just the bytes it copied, as the kernel's {@code iomap_write_iter} does ({@code bytes =
     * copied; goto retry}): write_begin then reads or zeroes the block where the copy stopped, which
     * has become a partial edge block, so the retry is accepted and the write returns exactly the bytes
     * before the fault. The source faulted right after them, so the write stops there.
     *
     * @param stop the file offset where to stop even if the mapping goes on ({@code Long.MAX_VALUE}: the
     *     end of the mapping)
     * @return bytes accepted under this mapping
     */
    private long writeIter(IomapIter iter, CopySource src, boolean appWrite, long stop) throws IOException {
        // The kernel's mapping_max_folio_size: the largest order raised to the minimum order.
        long maxFolioSize = 1L << (inode.pageCache().pageShift() + inode.pageCache().maxOrder());
        long done = 0;
        long retry = 0;
        try {
            while (iter.length() > 0 && iter.pos() < stop) {
                long pos = iter.pos();
                long bytes = Math.min(Math.min(iter.length(), stop - pos), maxFolioSize - (pos & (maxFolioSize - 1)));
                if (retry > 0) {
                    bytes = Math.min(bytes, retry);
                }
                Folio folio = writeBegin(iter, pos, bytes);
                if (folio == null) {
                    iter.markStale();
                    break;
                }
                int length;
                int accepted = 0;
                try {
                    int offset = (int) (pos - folio.pos());
                    length = (int) Math.min(bytes, folio.size() - offset);
                    accepted = copyIntoFolio(iter, folio, pos, offset, length, src, appWrite);
                    done += accepted;
                    // The kernel raises i_size before put_folio; the bytes count even if it fails.
                    copied.show(folio, offset, accepted);
                    try {
                        inode.writeOps().putFolio(inode, pos, accepted, iter.iomap(), copied);
                    } finally {
                        copied.hide();
                    }
                } finally {
                    folio.unlock();
                }
                if (accepted == 0 && refusedCopy > 0) {
                    retry = refusedCopy;
                    continue;
                }
                if (accepted < length) {
                    sourceFailed = true;
                    break;
                }
                if (retry > 0) {
                    retry -= accepted;
                    if (retry == 0) {
                        sourceFailed = true;
                        break;
                    }
                }
                inode.balanceDirty();
            }
        } finally {
            if (appWrite) {
                inode.stats().appWritten(done);
            }
        }
        return done;
    }

    /**
     * Copies into a locked folio and accepts what can be kept (write_end), advancing the iterator and
     * raising EOF; if that fails, the {@code putFolio} owed for the folio's {@code getFolio} is made with
     * nothing copied before the failure propagates.
     *
     * @return bytes accepted
     */
    private int copyIntoFolio(IomapIter iter, Folio folio, long pos, int offset, int length, CopySource src,
            boolean appWrite) throws IOException {
        int accepted;
        refusedCopy = 0;
        try {
            int copied = copy(src, folio, offset, length);
            accepted = writeEnd(folio, offset, length, copied, iter.iomap());
            if (accepted < copied) {
                src.revert(copied - accepted);
                refusedCopy = copied - accepted;
            }
        } catch (IOException | RuntimeException e) {
            putNothing(pos, iter.iomap(), e);
            throw e;
        }
        iter.advance(accepted);
        if (appWrite) {
            inode.extendSize(pos + accepted);
        }
        return accepted;
    }

    /**
     * The copy from the caller's source (the kernel's {@code copy_folio_from_iter_atomic}). A faulting
     * memory access that escapes the source (the JVM's {@link InternalError} for it, and no other error)
     * counts as nothing copied, like the kernel's short copy: the write then stops there and ends the
     * mapping with what was written before.
     */
    private int copy(CopySource src, Folio folio, int offset, int length) {
        try {
            return src.copyTo(folio, offset, length);
        } catch (InternalError e) {
            if (!SourceFaults.isAccessFault(e)) {
                throw e;
            }
            escapedFault = e;
            return 0;
        }
    }

    /**
     * The bytes a {@code putFolio} may ask for: the view of {@link #blocksView}, made only if asked,
     * and only while the call runs (one instance reused folio after folio: writes hold the inode lock
     * exclusively, and {@code putFolio} must not write this file through the cache).
     */
    private final class CopiedBlocks implements Supplier<ByteBuffer> {
        private Folio folio;
        private int offset;
        private int accepted;

        void show(Folio locked, int from, int bytes) {
            folio = locked;
            offset = from;
            accepted = bytes;
        }

        void hide() {
            folio = null;
        }

        @Override
        public ByteBuffer get() {
            if (folio == null) {
                throw new IllegalStateException("a folio's bytes are shown to putFolio only while it runs;"
                        + " copy what you keep during the call");
            }
            return blocksView(folio, offset, accepted);
        }
    }

    /**
     * A read-only view of the whole blocks of a locked folio that hold {@code [offset, offset +
     * accepted)}, for {@code putFolio}; empty when nothing was accepted.
     */
    private ByteBuffer blocksView(Folio folio, int offset, int accepted) {
        if (accepted == 0) {
            return EMPTY;
        }
        int blockSize = inode.blockSize();
        int first = offset & -blockSize;
        int end = Math.min(folio.size(), (offset + accepted + blockSize - 1) & -blockSize);
        return folio.readOnlyBuffer(first, end - first);
    }

    /** @return the bytes of a {@code putFolio} with nothing copied: none */
    private static ByteBuffer nothingCopied() {
        return EMPTY;
    }

    /**
     * The {@code putFolio} with nothing copied that closes a successful {@code getFolio} when the
     * write at {@code pos} fails or goes stale before the copy (the kernel's {@code out_unlock} path
     * of {@code iomap_write_begin}); its own failure is added to {@code failure}, if any, else thrown.
     */
    private void putNothing(long pos, Iomap iomap, Exception failure) throws IOException {
        try {
            inode.writeOps().putFolio(inode, pos, 0, iomap, BufferedWrite::nothingCopied);
        } catch (IOException | RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
    }

    /**
     * Gets the folio for {@code [pos, pos + length)} locked and ready for the copy, or null if the
     * mapping went stale: the kernel's {@code iomap_write_begin} (with {@code __iomap_get_folio} and
     * {@code iomap_get_folio}). Only the partial edge blocks that are not uptodate are read, or zeroed
     * when their old contents must not be seen. Once {@code getFolio} has returned, every way out
     * but returning the folio calls {@code putFolio} with nothing copied.
     */
    private Folio writeBegin(IomapIter iter, long pos, long length) throws IOException {
        PageCache cache = inode.pageCache();
        WriteOps hooks = inode.writeOps();
        int order = cache.options().orderHints() ? FolioOrder.hint(length, cache.pageShift()) : 0;
        hooks.getFolio(inode, pos, (int) Math.min(length, Integer.MAX_VALUE), iter.iomap());
        Folio folio = null;
        try {
            long index = pos >>> cache.pageShift();
            boolean created = dropBehind && cache.lookup(index) == null;
            folio = cache.grabLocked(index, order);
            if (created) {
                folio.setDropBehind();
            } else if (!dropBehind && folio.isDropBehind()) {
                folio.testClearDropBehind();   // a cached write keeps the folio
            }
            if (hooks.valid(inode, iter.iomap())) {
                int from = (int) (pos - folio.pos());
                int to = (int) Math.min(folio.size(), from + length);
                prepareBlocks(iter, folio, from, to);
                return folio;
            }
        } catch (IOException | RuntimeException e) {
            putNothing(pos, iter.iomap(), e);
            if (folio != null) {
                folio.unlock();
            }
            throw e;
        }
        try {
            putNothing(pos, iter.iomap(), null);
        } finally {
            folio.unlock();
        }
        return null;
    }

    /** The kernel's {@code __iomap_write_begin} (and {@code iomap_write_begin_inline}). */
    private void prepareBlocks(IomapIter iter, Folio folio, int from, int to) throws IOException {
        boolean unshare = iter.request().contains(IomapRequest.UNSHARE);
        if (from == 0 && to == folio.size() && !unshare) {
            return;
        }
        FolioState state = folio.stateForUpdate();
        if (folio.isUptodate()) {
            return;
        }
        Iomap srcmap = iter.srcmap();
        if (srcmap.type() == IomapType.INLINE) {
            inode.reader().fillInline(folio, srcmap);
            return;
        }
        int blockSize = inode.blockSize();
        int first = from & -blockSize;
        int last = (to - 1) & -blockSize;
        for (int block = first; block <= last; block += blockSize) {
            boolean coversBlock = from <= block && to >= block + blockSize;
            if (coversBlock && !unshare) {
                continue;
            }
            if (state != null && state.isBlockUptodate(block)) {
                continue;
            }
            long blockPos = folio.pos() + block;
            if (srcmap.needsZeroing() || blockPos >= inode.size()) {
                // Zero only what the copy will not overwrite, and leave the block not uptodate:
                // a short copy must not expose the bytes it did not reach.
                zeroOutside(folio.memory(), block, blockSize, from, to);
                continue;
            }
            inode.reader().readBlocks(folio, block, blockSize, srcmap);
        }
    }

    /**
     * Zeroes the parts of a block outside {@code [from, to)} (the kernel's {@code folio_zero_segments}),
     * leaving the block not uptodate (the 2024 series' patch 5).
     */
    private static void zeroOutside(MemorySegment memory, int block, int blockSize, int from, int to) {
        int blockEnd = block + blockSize;
        if (from > block) {
            memory.asSlice(block, Math.min(from, blockEnd) - block).fill((byte) 0);
        }
        if (to < blockEnd) {
            int start = Math.max(to, block);
            memory.asSlice(start, blockEnd - start).fill((byte) 0);
        }
    }

    /**
     * Marks the copied range uptodate and dirty (the kernel's {@code __iomap_write_end}, through
     * {@code iomap_set_range_uptodate} and {@code iomap_set_range_dirty}). A short copy
     * into a folio that is not uptodate counts as nothing: the blocks it half filled would otherwise be
     * uptodate with bytes never written ({@link #writeIter} then writes again just the bytes copied). Through an {@code INLINE} mapping the copied bytes go into
     * the adapter's inline buffer instead and the folio stays clean (the kernel's
     * {@code iomap_write_end_inline}): writeback has nothing to map there.
     *
     * @return bytes accepted
     */
    private int writeEnd(Folio folio, int offset, int length, int copied, Iomap iomap) throws IomapException {
        if (copied < length && !folio.isUptodate()) {
            return 0;
        }
        if (copied == 0) {
            return 0;
        }
        FolioState state = folio.state();
        if (iomap.type() == IomapType.INLINE) {
            BufferedRead.writeThroughInline(folio, offset, copied, iomap);
            if (state == null || state.setRangeUptodate(offset, copied)) {
                folio.markUptodate();
            }
            return copied;
        }
        if (state == null) {
            folio.markUptodate();
        } else if (state.markWritten(inode.pageCache().options().stateLock(), offset, length, copied)) {
            folio.markUptodate();
        }
        folio.markDirty();
        return copied;
    }
}
