package dev.iomap.spi;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.ZonedBlockDevice;
import java.io.IOException;

/**
 * How an adapter takes part in writeback: the kernel's {@code iomap_writeback_ops}.
 *
 * <p>The core walks dirty folios in file order and, for each run of dirty blocks, asks
 * {@link #mapBlocks} where it goes. Device writes complete asynchronously; {@link #ioendCompleted}
 * then runs before the folios leave writeback, so an fsync that waits for writeback also waits for
 * the adapter's completion work (unwritten conversion, copy-on-write remap, on-disk size).
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
     * writeback.
     *
     * @param inode the file
     * @param completion what was written and whether it failed
     * @throws IOException if completion work failed; reported at the next fsync
     */
    default void ioendCompleted(IomapInode inode, IoendCompletion completion) throws IOException {
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
}
