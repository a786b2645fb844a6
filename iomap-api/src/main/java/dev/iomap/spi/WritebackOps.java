package dev.iomap.spi;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ZonedBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * How an adapter takes part in writeback: the kernel's {@code iomap_writeback_ops}.
 *
 * <p>The core walks dirty folios in file order and, for each run of dirty blocks, asks
 * {@link #mapBlocks} where it goes. Device writes complete asynchronously; {@link #ioendCompleted}
 * then runs before the folios leave writeback, so an fsync that waits for writeback also waits for
 * the adapter's completion work (unwritten conversion, copy-on-write remap, on-disk size).
 * {@link #beforeSubmit} shows the adapter each ioend's bytes just before the device write, so that a
 * journaling adapter can log them first.
 */
public interface WritebackOps {

    /**
     * Maps dirty data at {@code pos} for writeback, allocating real blocks for delayed allocations
     * (the kernel's {@code map_blocks}, now part of {@code writeback_range}).
     *
     * @param inode the file
     * @param pos first dirty byte, block aligned
     * @param length bytes of the dirty run
     * @return a {@link IomapType#MAPPED} or {@link IomapType#UNWRITTEN} mapping containing {@code pos}
     *     (it may be shorter than {@code length}, the core then asks again for the rest)
     * @throws IOException if no blocks can be found; the folio's dirty data is then discarded via
     *     {@link #discardFolio} and the error is reported at the next fsync
     */
    Iomap mapBlocks(IomapInode inode, long pos, long length) throws IOException;

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
     * Dirty data in {@code [pos, pos + length)} will not be written because {@link #mapBlocks} failed;
     * release whatever the adapter reserved for it (the kernel's {@code discard_folio}).
     *
     * @param inode the file
     * @param pos first byte of the discarded range
     * @param length bytes
     */
    default void discardFolio(IomapInode inode, long pos, long length) {
    }

    /**
     * One ioend is about to be submitted: the core calls this just before its device write (the
     * kernel's {@code ->writeback_submit} point, where a filesystem may act on the ioend before
     * {@code iomap_ioend_writeback_submit}). A journaling adapter writes {@code data} to its journal
     * here, and waits for it, so that the journal has the blocks before their home location does
     * (gfs2's journaled data). The default does nothing.
     *
     * <p>{@code ioend} describes exactly the ioend: {@code offset} is its first byte (block aligned),
     * {@code length} its bytes (whole blocks; the block straddling EOF was zeroed past EOF),
     * {@code address} the device byte address it will be written at, and type and flags those of every
     * mapping it was built from ({@link #mapBlocks} answers that are contiguous in the file and on the
     * device and have the same type and flags are merged into one ioend, so it may span several, and
     * its validity cookie is that of the one containing {@code offset}). {@code data} holds read-only
     * views of exactly the bytes that will be written, in file order, together
     * {@code ioend.length()} bytes covering {@code [ioend.offset(), ioend.end())}; each is positioned
     * at 0. The views are valid only during the call (folio memory is reused after it leaves the
     * cache): copy what is kept. The bytes do not change until the write completes: the folios are
     * under writeback, and writers and mapped stores wait for writeback to end before they change a
     * folio.
     *
     * <p>It runs for every ioend, including those of folios dirtied by a mapped store or written
     * through a zeroing, for which no {@link WriteOps#putFolio(IomapInode, long, int, Iomap, ByteBuffer)}
     * ran, and of blocks written again without being dirty (a folio without per-block dirty tracking
     * is written whole).
     *
     * <p>Threads and locks: it runs on the thread doing the writeback pass, never on a completion
     * thread: a caller of fsync, sync or {@link IomapInode#writeAndWait} (which may hold this inode's
     * lock, as truncate and zeroing do, or this inode's cluster lock, as a glock demotion's
     * {@code go_sync} does), a writer throttled at the dirty limit (which holds its own inode's lock
     * exclusively and may be writing back another inode), or the background flusher. The pass may hold
     * the lock of one folio of this inode (the one it is mapping when the ioend is submitted; that
     * folio may be in this ioend) and, for {@link #writesInFileOrder} inodes, the inode's writeback
     * order. Every folio in {@code data} is under writeback and no longer dirty. So it must not call
     * {@link IomapInode#writeAndWait} or {@link IomapInode#invalidateCache} for this inode, nor read or
     * write this file through the cache, nor wait for a lock whose holder may be waiting for this
     * writeback (this inode's glock, or a log flush that waits for ordered data of this inode): each
     * would wait for writeback that this pass has not submitted yet. It may do device I/O of its own and
     * wait for it.
     *
     * <p>If it throws, the ioend is not submitted (nothing of it reaches the device) and completes as
     * failed with that error exactly as a device write error would: {@link #ioendCompleted} sees the
     * error, the folios end writeback (clean, as after a failed write), and the error is reported at
     * the next fsync of each open file. A {@link RuntimeException} is treated alike. The pass goes on
     * with the next ioend.
     *
     * @param inode the file
     * @param ioend the file range, device address, type and flags of the ioend (see above)
     * @param data read-only views of the bytes to be written, in file order, valid during the call only
     * @throws IOException to fail this ioend instead of writing it
     */
    default void beforeSubmit(IomapInode inode, Iomap ioend, List<ByteBuffer> data) throws IOException {
    }

    /**
     * Writes one ioend: the kernel's {@code ->writeback_submit}, which a filesystem implements when it
     * does more than submit the bio as built (XFS's zoned and copy-on-write submission; bcachefs's own
     * write path, which checksums and compresses). The core calls it right after {@link #beforeSubmit},
     * for every ioend; the default writes {@code data} at the ioend's device address as file data, which
     * is what the core did before this hook existed.
     *
     * <p>{@code ioend} and {@code data} are as in {@link #beforeSubmit}, except that the buffers are
     * the folio memory itself: the adapter must not change them, and they stay valid and unchanged until
     * the returned future completes (the folios stay under writeback until then). An adapter may write
     * somewhere else than {@code ioend}'s address, fewer bytes (compressed) or in several device writes;
     * what it owes is a future that completes when the data is on the device as the adapter will find it
     * (or fails). {@link #ioendCompleted} runs after the future completes, with the error it failed with.
     * Threads and locks are those of {@link #beforeSubmit}.
     *
     * @param inode the file
     * @param ioend the file range, device address, type and flags of the ioend
     * @param data the bytes to be written, in file order, {@code ioend.length()} in all
     * @param device the device the filesystem is on
     * @return a future completing when the ioend's data is written
     * @throws IOException to fail the ioend without writing it, as for {@link #beforeSubmit}
     */
    default CompletableFuture<Void> submitIoend(IomapInode inode, Iomap ioend, List<ByteBuffer> data,
            BlockDevice device) throws IOException {
        return device.write(ioend.deviceAddress(ioend.offset()), data, IoPurpose.DATA);
    }
}
