package dev.iomap.spi;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.ZonedBlockDevice;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * How an adapter takes part in writeback: the kernel's {@code iomap_writeback_ops}.
 *
 * <p>The core walks dirty folios in file order and, for each run of dirty blocks, calls
 * {@link #writebackRange} to map it and add it to the ioend being built; {@link #writebackSubmit}
 * submits each ioend built (6.17's {@code iomap_writeback_ops}: {@code writeback_range},
 * {@code writeback_submit}). Device writes complete asynchronously; {@link #ioendCompleted} then runs
 * before the folios leave writeback, so an fsync that waits for writeback also waits for the
 * adapter's completion work (unwritten conversion, copy-on-write remap, on-disk size).
 */
public interface WritebackOps {

    /**
     * Writes back one dirty range of a folio (the kernel's {@code writeback_range}, 6.17): maps it,
     * allocating real blocks for delayed allocations, and adds it to the ioend through
     * {@link WritebackContext#addToIoend}, returning what that returned. The core calls it for every
     * run of dirty blocks of every folio it writes back, at least once per folio, and again for the
     * rest of a run while the answers are shorter than the run. The usual body is
     * {@code return wpc.addToIoend(mapBlocks(wpc.inode(), pos, length), pos, length);}; an adapter may
     * reuse {@link WritebackContext#iomap()} when it still holds (XFS's {@code xfs_map_blocks} does).
     *
     * <p>Threads and locks: the thread of the writeback pass (an fsync or sync caller, a writer
     * throttled at the dirty limit, or the background flusher), with the folio locked and under
     * writeback. It may take the adapter's locks and do metadata I/O; it must not wait for writeback
     * of this inode ({@link IomapInode#writeAndWait}) nor read or write this file through the cache.
     *
     * <p>If it throws, the folio's dirty data from {@code pos} on is not written (it leaves the cache's
     * dirty state; what earlier calls added is written), the error is reported at the next fsync, and
     * the pass goes on with the next folio. Before it throws, the adapter releases what it reserved for
     * the data of {@code [pos, endPos)} that will now never be written (the kernel's XFS calls
     * {@code xfs_discard_folio} there).
     *
     * @param wpc the writeback pass, whose {@link WritebackContext#addToIoend} takes the range
     * @param pos first dirty byte, block aligned
     * @param length bytes of the dirty run from {@code pos}, whole blocks (the block straddling EOF
     *     included)
     * @param endPos end of the folio's data to write back: the folio's end, or EOF if the folio holds it
     * @return the bytes added from {@code pos}: what its {@link WritebackContext#addToIoend} calls
     *     returned, together; at least 1 (the core refuses any other answer with an
     *     {@link dev.iomap.api.IomapException}, as for a failure)
     * @throws IOException if the range cannot be mapped; see above
     */
    long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException;

    /**
     * One ioend finished (successfully or not): a filesystem's ioend completion, such as the
     * kernel's {@code xfs_end_ioend}. Runs on a completion thread, before the folios it covers end
     * writeback. The completion threads of a mount are few (a bounded pool, like the kernel's
     * completion workqueue), so this may do metadata I/O and take the adapter's locks, but must never
     * wait for the writeback of other folios ({@link IomapInode#writeAndWait}): that writeback's own
     * completion may be queued behind it.
     *
     * @param inode the file
     * @param completion what was written and whether it failed
     * @throws IOException if completion work failed; reported at the next fsync
     */
    default void ioendCompleted(IomapInode inode, IoendCompletion completion) throws IOException {
    }

    /**
     * An atomic direct write ({@link IomapRequest#ATOMIC}) finished: every run of it, in file order, each
     * mapped by {@link IomapOps#begin} and written through {@link #writebackSubmit}. The kernel's
     * {@code iomap_dio_ops->end_io} for an {@code IOCB_ATOMIC} write, which XFS ends with
     * {@code xfs_reflink_end_atomic_cow}: one transaction that remaps all of it. Called once, on the
     * writing thread, after every run's device write completed, with the in-memory size already
     * covering the write if it extends the file; never together with {@link #ioendCompleted} for
     * these runs.
     *
     * <p>If any run failed, every run carries an error (the first failure) and the adapter releases
     * what it staged, changing nothing the file shows. Otherwise an adapter declaring
     * {@link dev.iomap.api.Capability#ATOMIC_WRITES} makes all the runs' mapping changes and the size
     * part of one transaction, so that a crash leaves all or none of them. This default completes each
     * run with {@link #ioendCompleted}, which is not atomic: an adapter without the capability never
     * gets here.
     *
     * @param inode the file
     * @param runs the runs of the write, in file order, at least one
     * @throws IOException if the completion failed; the write then fails
     */
    default void atomicWriteCompleted(IomapInode inode, java.util.List<IoendCompletion> runs) throws IOException {
        for (IoendCompletion run : runs) {
            ioendCompleted(inode, run);
        }
    }

    /**
     * Whether a successfully written ioend needs no completion work at all, so that the core may end
     * writeback of its folios on the thread the device completed the write on, skipping
     * {@link #ioendCompleted} and the hand-off to a completion thread (one thread switch per ioend,
     * as much as a fast device's write on a small machine). The kernel's XFS asks the same
     * ({@code xfs_ioend_needs_wq_completion}): an ioend into written blocks, not shared, within the
     * on-disk size completes in the bio's end_io; unwritten conversion, COW remapping and size
     * updates go to a workqueue.
     *
     * <p>Runs on the device's completion thread (or on the submitting thread, when the device completed
     * the write before returning it, as under {@link dev.iomap.device.SyncSubmit}): it must answer from memory, quickly, without
     * blocking (no locks another thread may hold across I/O, no device I/O). When unsure, answer
     * false. A failed ioend is never asked. Default: false, always complete through
     * {@link #ioendCompleted} on a completion thread.
     *
     * @param inode the file
     * @param completion what was written (it did not fail)
     * @return true if there is nothing for {@link #ioendCompleted} to do for this ioend
     */
    default boolean completesWithoutWork(IomapInode inode, IoendCompletion completion) {
        return false;
    }

    /**
     * Whether the file's blocks must reach the device in file order: a file on a sequential zone,
     * which the device accepts only at its write pointer.
     *
     * <p>For such an inode the core runs one writeback pass at a time (a background pass, an fsync and
     * a throttled writer take turns), starts a pass asked for a range at the beginning of the file
     * (writing back {@code [start, end)} first writes whatever is dirty before {@code start}), and
     * ends a pass at the first dirty folio it cannot write yet (one still under writeback, or not yet
     * old enough for a background pass) instead of going past it. So the inode's ioends are
     * submitted to {@link BlockDevice#write} strictly in ascending file order, each after the one
     * before it was submitted; keeping them in that order until they complete is the device's part
     * (see {@link ZonedBlockDevice}). The kernel keeps the same order for zoned devices by serialising
     * writeback (f2fs) or by allowing only direct I/O (zonefs).
     *
     * <p>Order is all this gives: it assumes per-block dirty tracking
     * ({@link PageCacheOptions#perBlockDirty()}) or one-block folios, since rewriting clean blocks of a
     * folio would write below the write pointer. Default: false.
     *
     * @param inode a file
     * @return whether its writeback must be submitted in file order; may differ between inodes, must
     *     not change for one inode while it is cached
     */
    default boolean writesInFileOrder(IomapInode inode) {
        return false;
    }

    /**
     * Submits one built ioend (the kernel's {@code writeback_submit}, 6.17): the core calls it when
     * {@link WritebackContext#addToIoend} cannot extend the ioend, and at the end of the pass. The
     * default writes it as built ({@link WritebackIoend#submit}, the kernel's
     * {@code iomap_ioend_writeback_submit}). An adapter overrides it to act on the ioend first (a
     * journaling adapter logs {@link WritebackIoend#data()} and waits for it, so that the journal has
     * the blocks before their home location: gfs2's journaled data) or to write it itself, somewhere
     * else than its address, fewer bytes (compressed) or in several device writes (bcachefs's own write
     * path, XFS's zoned and copy-on-write submission). What it owes is a future that completes when
     * the data is on the device as the adapter will find it, or fails; {@link #ioendCompleted} runs
     * after it with its error.
     *
     * <p>It runs for every ioend, including those of folios dirtied by a mapped store or a zeroing,
     * for which no {@link WriteOps#putFolio} ran, and of blocks written again without being dirty (a
     * folio without per-block dirty tracking is written whole).
     *
     * <p>Threads and locks: those of {@link #writebackRange}, on the thread of the pass, never on a
     * completion thread: a caller of fsync, sync or {@link IomapInode#writeAndWait} (which may hold
     * this inode's lock, as truncate and zeroing do, or this inode's cluster lock, as a glock
     * demotion's {@code go_sync} does), a writer throttled at the dirty limit (which holds its own
     * inode's lock and may be writing back another inode), or the background flusher. The pass may
     * hold the lock of one folio of this inode (which may be in this ioend) and, for
     * {@link #writesInFileOrder} inodes, the inode's writeback order. So it must not call
     * {@link IomapInode#writeAndWait} or {@link IomapInode#invalidateCache} for this inode, nor read or
     * write this file through the cache, nor wait for a lock whose holder may wait for this writeback
     * (this inode's glock, or a log flush that waits for ordered data of this inode): each would wait
     * for writeback that this pass has not submitted yet. It may do device I/O of its own and wait for
     * it.
     *
     * <p>If it throws (or returns a failed future), nothing more of the ioend is written by the core
     * and it completes as failed with that error, exactly as after a device write error:
     * {@link #ioendCompleted} sees the error, the folios end writeback (clean), and the error is
     * reported at the next fsync of each open file. A {@link RuntimeException} is treated alike. The
     * pass goes on with the next ioend.
     *
     * @param inode the file
     * @param ioend the built ioend: its range, bytes, and the default submission
     * @return a future completing when the ioend's data is written
     * @throws IOException to fail the ioend without writing it
     */
    default CompletableFuture<Void> writebackSubmit(IomapInode inode, WritebackIoend ioend) throws IOException {
        return ioend.submit();
    }
}
