package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.FolioState;
import dev.iomap.core.mm.PageCache;
import dev.iomap.core.trace.AddToIoendEvent;
import dev.iomap.core.trace.WritebackFolioEvent;
import dev.iomap.device.SyncSubmit;
import dev.iomap.spi.Iomap;
import dev.iomap.api.IomapException;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WritebackContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * One writeback pass over one inode: the kernel's {@code struct iomap_writepage_ctx}, whose
 * {@code wb_ctx} is {@code ioend} here, with {@code iomap_writepages} and
 * {@code iomap_writeback_folio}. The adapter sees it as its {@link WritebackContext}.
 *
 * <p>Dirty folios are visited in index order. A folio wholly past EOF only has its dirty flag and
 * dirty bits cleared: it stays cached and no writeback starts. Every other one has its dirty flag
 * cleared and writeback started (the one straddling EOF has its tail zeroed first); then every run
 * of dirty blocks (every run of uptodate blocks when per-block dirty tracking is off) goes to the
 * adapter's {@code writebackRange}, which maps it and adds it to the current {@link Ioend} through
 * {@link #addToIoend}; an ioend is submitted when the next range cannot be merged into it. A
 * writeback pass never blocks on a folio lock while holding an unsubmitted ioend, so writers waiting
 * for writeback always make progress.
 *
 * <p>For an inode whose adapter asks for file order ({@link dev.iomap.spi.WritebackOps#writesInFileOrder}), passes take turns
 * on the inode's writeback-order lock, a pass for a range starts at the beginning of the file, and a
 * pass stops at the first dirty folio it leaves dirty, so ioends reach the device in ascending file
 * order.
 */
final class Writeback implements WritebackContext {
    private final IomapContext inode;
    private Ioend ioend;
    private Iomap iomap;
    private Folio rangeFolio;
    private long rangeStart;
    private long rangeEnd;
    private long dirtiedBefore = Long.MAX_VALUE;

    Writeback(IomapContext inode) {
        this.inode = inode;
    }

    /**
     * Writes back the dirty folios intersecting {@code [start, end)}: the kernel's
     * {@code iomap_writepages}, walking the dirty tag as its {@code writeback_iter} does.
     *
     * @param sync whether to also write folios already under writeback (after waiting for it), as
     *     fsync needs; a background pass skips them
     */
    void writepages(long start, long end, boolean sync) {
        PageCache cache = inode.pageCache();
        if (end <= start || !cache.hasDirty()) {
            return;
        }
        boolean ordered = writesInFileOrder();
        // In file order nothing can be written past dirty data that is still waiting: start at 0.
        long firstIndex = ordered ? 0 : start >>> cache.pageShift();
        long lastIndex = (end - 1) >>> cache.pageShift();
        Folio first = cache.lookup(firstIndex);
        long from = first != null ? first.index() : firstIndex;
        if (ordered) {
            inode.writebackOrder().lock();
        }
        try {
            for (long index = cache.nextDirty(from, lastIndex); index >= 0;
                    index = cache.nextDirty(index + 1, lastIndex)) {
                Folio folio = cache.folioAt(index);
                if (folio != null && !writeFolioIfDirty(folio, sync) && ordered) {
                    break;
                }
            }
        } finally {
            submitLast(sync);
            if (ordered) {
                inode.writebackOrder().unlock();
            }
        }
    }

    private boolean writesInFileOrder() {
        return inode.writebackOps().writesInFileOrder(inode);
    }

    /**
     * A background pass over the folios dirty since before {@code nanos} ({@link System#nanoTime()}):
     * the kernel's {@code wb_check_old_data_flush}, by folio age instead of inode {@code dirtied_when}.
     */
    void writepagesDirtiedBefore(long nanos) {
        dirtiedBefore = nanos;
        writepages(0, Long.MAX_VALUE, false);
    }

    /** @return false if the folio was left dirty for a later pass */
    private boolean writeFolioIfDirty(Folio folio, boolean sync) {
        if (dirtiedBefore != Long.MAX_VALUE && folio.dirtiedAtNanos() - dirtiedBefore > 0) {
            return false;
        }
        if (!folio.tryLock()) {
            submit();
            folio.lock();
        }
        try {
            if (folio.isRemoved() || !folio.isDirty()) {
                return true;
            }
            if (folio.isWriteback()) {
                if (!sync) {
                    return false;
                }
                submit();
                folio.waitWriteback();
            }
            writeFolio(folio);
            return true;
        } finally {
            // an uncached write's folio whose writeback ended while it was being mapped leaves here
            inode.pageCache().endDropBehind(folio);
            folio.unlock();
        }
    }

    /**
     * Maps and queues the dirty blocks of a locked, dirty folio: the kernel's
     * {@code iomap_writeback_folio}, with the EOF handling of its {@code iomap_writeback_handle_eof}.
     */
    private void writeFolio(Folio folio) {
        long size = inode.size();
        if (folio.pos() >= size) {
            folio.clearDirtyForIo();
            FolioState state = folio.state();
            if (state != null) {
                state.clearAllDirty();
            }
            return;
        }
        int end = folio.size();
        long endPos = folio.end();
        if (folio.end() > size) {
            endPos = size;
            int eof = (int) (size - folio.pos());
            folio.memory().asSlice(eof, folio.size() - eof).fill((byte) 0);
            end = (eof + inode.blockSize() - 1) & -inode.blockSize();
        }
        // No state is made here (the kernel's writeback makes one): a multi-block folio without one is
        // dirty and uptodate as a whole, and is written as one run.
        FolioState state = folio.state();
        folio.clearDirtyAndStartWriteback();
        WritebackFolioEvent.emit(inode, folio.pos(), folio.size(), folio.order());
        try {
            writeRuns(folio, state, end, endPos);
        } catch (IOException | RuntimeException e) {
            inode.writebackError().record(asIoException(e));
        } finally {
            if (state != null) {
                state.clearAllDirty();
            }
            folio.finishWriteback(1);
        }
    }

    /**
     * Maps every run of dirty blocks below {@code end} (the kernel's {@code iomap_find_dirty_range} and
     * {@code ifs_find_dirty_range}); every run of uptodate blocks when per-block dirty tracking is off.
     */
    private void writeRuns(Folio folio, FolioState state, int end, long endPos) throws IOException {
        boolean perBlockDirty = inode.pageCache().options().perBlockDirty();
        int offset = 0;
        while (offset < end) {
            int start;
            int stop;
            if (state == null) {
                start = 0;
                stop = end;
            } else if (perBlockDirty) {
                start = state.nextDirtyBlock(offset, end);
                stop = start < 0 ? -1 : state.nextCleanBlock(start, end);
            } else {
                start = state.nextUptodateBlock(offset, end);
                stop = start < 0 ? -1 : state.nextNotUptodateBlock(start, end);
            }
            if (start < 0) {
                return;
            }
            stop = Math.min(stop, end);
            writebackRange(folio, folio.pos() + start, stop - start, endPos);
            offset = stop;
        }
    }

    /**
     * Hands one dirty run to the adapter's {@code writebackRange} until all of it is in ioends: the
     * kernel's {@code iomap_writeback_range}. Each call must add at least one byte through
     * {@link #addToIoend} and return exactly what it added; the next call starts after it.
     */
    private void writebackRange(Folio target, long pos, long length, long endPos) throws IOException {
        rangeFolio = target;
        rangeStart = pos;
        rangeEnd = pos + length;
        try {
            while (pos < rangeEnd) {
                inode.stats().mapBlocksCalled();
                long done = inode.writebackOps().writebackRange(this, pos, rangeEnd - pos, endPos);
                long added = rangeStart - pos;
                if (added <= 0 || done != added) {
                    throw new IomapException("writebackRange of inode " + inode.ino() + " at " + pos + " for "
                            + (rangeEnd - pos) + " bytes returned " + done + " after adding " + added
                            + " bytes to the ioend; it must add at least 1 byte through addToIoend and"
                            + " return what addToIoend returned");
                }
                pos = rangeStart;
            }
        } finally {
            rangeFolio = null;
        }
    }

    @Override
    public IomapInode inode() {
        return inode;
    }

    @Override
    public Iomap iomap() {
        return iomap;
    }

    /**
     * Adds the mapped part of the current dirty range to ioends: the kernel's
     * {@code iomap_add_to_ioend} with {@code iomap_can_add_to_ioend}. The ioend being built takes what
     * continues it, up to the size limit; otherwise it is submitted and a new one started, as often as
     * the limit requires.
     */
    @Override
    public long addToIoend(Iomap map, long pos, long length) throws IOException {
        checkWritable(map, pos, length);
        long maxIoend = inode.pageCache().options().maxIoendBytes();
        long stop = Math.min(Math.min(rangeEnd, map.end()), pos + length);
        for (long at = pos; at < stop; ) {
            long chunk = Math.min(stop - at, maxIoend);
            if (ioend == null || !ioend.canAppend(at, chunk, map, maxIoend)) {
                submit();
                ioend = new Ioend(map, at, inode.device());
            }
            ioend.append(rangeFolio, (int) (at - rangeFolio.pos()), (int) chunk);
            AddToIoendEvent.emit(inode, at, chunk, map);
            at += chunk;
        }
        iomap = map;
        rangeStart = stop;
        return stop - pos;
    }

    private void checkWritable(Iomap map, long pos, long length) throws IomapException {
        if (rangeFolio == null || pos != rangeStart || length <= 0) {
            throw new IomapException("addToIoend of inode " + inode.ino() + " at " + pos + " for " + length
                    + " bytes: only the dirty range being written back may be added, from its next byte ("
                    + (rangeFolio == null ? "none is" : rangeStart + " is") + "), during writebackRange");
        }
        if (map == null || !map.contains(pos)
                || (map.type() != IomapType.MAPPED && map.type() != IomapType.UNWRITTEN)) {
            throw new IomapException("writeback of inode " + inode.ino() + " at " + pos
                    + " was given " + map + "; writeback needs a MAPPED or UNWRITTEN mapping containing it"
                    + (map != null && map.type() == IomapType.INLINE
                            ? " (inline data is written through at write time, never written back)" : ""));
        }
    }

    /**
     * Submits the pass's last ioend. In a data-integrity pass ({@code sync}) the caller waits for it
     * right away, so it is submitted under {@link SyncSubmit#run}: a device that can (a file device)
     * writes it in this thread, and its completion runs here too, with no thread switch either way (the
     * kernel submits from the fsync caller as well). The earlier ioends of the pass were submitted as
     * usual, so they stay in flight beside it.
     */
    private void submitLast(boolean sync) {
        if (sync && ioend != null) {
            SyncSubmit.run(this::submit);
        } else {
            submit();
        }
    }

    /**
     * Submits the current ioend, if any, through the adapter's {@code writebackSubmit} (the kernel's
     * {@code ->writeback_submit}, whose default is {@code iomap_ioend_writeback_submit}). If it fails,
     * the ioend completes with its error, as after a device write error.
     */
    private void submit() {
        Ioend current = ioend;
        if (current == null) {
            return;
        }
        ioend = null;
        inode.stats().ioendSubmitted();
        CompletableFuture<Void> write;
        try {
            write = inode.writebackOps().writebackSubmit(inode, current);
            if (write == null) {
                throw new IllegalStateException("writebackSubmit returned no future for " + current.range()
                        + " of inode " + inode.ino());
            }
        } catch (IOException | RuntimeException e) {
            write = CompletableFuture.failedFuture(e);
        } catch (OutOfMemoryError e) {
            write = CompletableFuture.failedFuture(e);
            inode.outOfMemory(e);
        }
        boolean completedHere = write.isDone();
        write.whenComplete((ignored, failure) -> {
            if (failure == null && completesWithoutWork(current)) {
                current.finishFolios();
            } else if (completedHere) {
                complete(current, failure);
            } else {
                // Off the device's own threads: the adapter's completion work may do device I/O.
                inode.completionExecutor().execute(() -> complete(current, failure));
            }
        });
    }

    /** Asks the adapter (on the device's thread, or the submitter's) whether a written ioend needs completion work. */
    private boolean completesWithoutWork(Ioend done) {
        try {
            return inode.writebackOps().completesWithoutWork(inode, done.completion(null));
        } catch (RuntimeException e) {
            return false; // then ioendCompleted runs as usual, and reports what is wrong
        }
    }

    /**
     * Runs the adapter's completion work, records errors, then ends folio writeback: the kernel's
     * {@code ioend_writeback_end_bio}, or {@code iomap_finish_ioends} where the filesystem completes
     * ioends itself first (as XFS does in {@code xfs_end_ioend}).
     */
    private void complete(Ioend done, Throwable failure) {
        IOException error = failure == null ? null : asIoException(failure);
        try {
            inode.writebackOps().ioendCompleted(inode, done.completion(error));
        } catch (IOException | RuntimeException | OutOfMemoryError e) {
            if (error == null) {
                error = asIoException(e);
            } else {
                error.addSuppressed(e);
            }
            if (e instanceof OutOfMemoryError oom) {
                inode.outOfMemory(oom);
            }
        } finally {
            if (error != null) {
                inode.writebackError().record(error);
            }
            done.finishFolios();
        }
    }

    static IOException asIoException(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof UncheckedIOException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause instanceof IOException io ? io : new IOException(cause.toString(), cause);
    }

    /**
     * Waits for every folio under writeback in {@code [start, end)} (the kernel's
     * {@code filemap_fdatawait_range}).
     */
    void waitWriteback(long start, long end) {
        PageCache cache = inode.pageCache();
        if (end <= start) {
            return;
        }
        long firstIndex = start >>> cache.pageShift();
        long lastIndex = (end - 1) >>> cache.pageShift();
        Folio first = cache.lookup(firstIndex);
        long from = first != null ? first.index() : firstIndex;
        for (long index = cache.nextWriteback(from, lastIndex); index >= 0;
                index = cache.nextWriteback(index + 1, lastIndex)) {
            Folio folio = cache.folioAt(index);
            if (folio != null) {
                folio.waitWriteback();
            }
        }
    }
}
