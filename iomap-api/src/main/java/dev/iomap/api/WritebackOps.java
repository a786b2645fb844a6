package dev.iomap.api;

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
     * Maps dirty data at {@code pos} for writeback, allocating real blocks for delayed allocations.
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
     * One ioend finished (successfully or not). Runs on a completion thread, before the folios it
     * covers end writeback.
     *
     * @param inode the file
     * @param completion what was written and whether it failed
     * @throws IOException if completion work failed; reported at the next fsync
     */
    default void ioendCompleted(IomapInode inode, IoendCompletion completion) throws IOException {
    }

    /**
     * Dirty data in {@code [pos, pos + length)} will not be written because {@link #mapBlocks} failed;
     * release whatever the adapter reserved for it.
     *
     * @param inode the file
     * @param pos first byte of the discarded range
     * @param length bytes
     */
    default void discardFolio(IomapInode inode, long pos, long length) {
    }
}
