package dev.iomap.api;

/**
 * {@link WritebackOps} for files whose blocks must reach the device in file order: a file on a
 * sequential zone, which the device accepts only at its write pointer.
 *
 * <p>For an inode for which {@link #writesInFileOrder} is true, the core runs one writeback pass at a
 * time (a background pass, an fsync and a throttled writer take turns), starts a pass asked for a
 * range at the beginning of the file (writing back {@code [start, end)} first writes whatever is dirty
 * before {@code start}), and ends a pass at the first dirty folio it cannot write yet (one still under
 * writeback, or not yet old enough for a background pass) instead of going past it. So the inode's
 * ioends are submitted to {@link BlockDevice#write} strictly in ascending file order, each after the
 * one before it was submitted; keeping them in that order until they complete is the device's part
 * (see {@link ZonedBlockDevice}). The kernel keeps the same order for zoned devices by serialising
 * writeback (f2fs) or by allowing only direct I/O (zonefs).
 *
 * <p>Order is all this gives: it assumes per-block dirty tracking ({@link PageCacheOptions#perBlockDirty()})
 * or one-block folios, since rewriting clean blocks of a folio would write below the write pointer.
 */
public interface OrderedWritebackOps extends WritebackOps {

    /**
     * @param inode a file
     * @return whether its writeback must be submitted in file order; may differ between inodes, must
     *     not change for one inode while it is cached
     */
    boolean writesInFileOrder(IomapInode inode);
}
