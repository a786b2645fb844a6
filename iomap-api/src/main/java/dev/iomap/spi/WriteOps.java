package dev.iomap.spi;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Supplier;

/**
 * Optional per-folio hooks of the buffered write path: the kernel's {@code iomap_write_ops}
 * ({@code get_folio}, {@code put_folio}, {@code iomap_valid}). A journaling adapter opens a
 * transaction in {@link #getFolio} and adds the written blocks to it in {@link #putFolio}, which shows
 * it the bytes (gfs2's journaled data, {@code gfs2_trans_add_databufs}); an adapter with per-folio
 * space reservations takes them in {@link #getFolio}; an adapter whose extent map changes under the
 * cache (writeback allocating, truncate) answers {@link #valid}. All default to doing nothing (valid:
 * always).
 *
 * <p>The hooks run for every folio that a buffered write, a zeroing ({@code iomap_zero_range}) or an
 * unshare goes through, on the caller's thread, with the inode lock held exclusively. A mapped store
 * ({@code MappedRegion}) dirties folios without them; an adapter that must see every byte it writes
 * (journaled data) sees those at writeback, in {@link WritebackOps#writebackSubmit}.
 */
public interface WriteOps {

    /** Hooks that do nothing. */
    WriteOps NONE = new WriteOps() { };

    /**
     * Called before the core locks the folio that will receive {@code length} bytes at {@code pos}
     * (where the kernel calls {@code get_folio}; this hook cannot supply the folio). Lock order: what
     * this takes (a journal transaction) comes before the folio lock.
     *
     * <p>If it returns normally, the core calls {@link #putFolio}
     * for the same {@code pos} exactly once afterwards, whatever happens, as the kernel pairs
     * {@code get_folio} with {@code put_folio}: with {@code copied} 0 if the mapping went stale, reading
     * the edge blocks failed, no folio could be had, or the copy failed.
     *
     * @param inode the file
     * @param pos file offset of the write into this folio
     * @param length bytes the core will try to copy
     * @param iomap the mapping the write goes through
     * @throws IOException to fail the write at this folio (nothing was copied; no {@code putFolio}
     *     follows)
     */
    default void getFolio(IomapInode inode, long pos, int length, Iomap iomap) throws IOException {
    }

    /**
     * Called after the copy into one folio, with the folio still locked (the kernel's
     * {@code put_folio}; the core unlocks the folio afterwards), once per successful {@link #getFolio}.
     *
     * <p>{@code blocks} makes, when asked, a read-only view of the folio's memory over the whole
     * filesystem blocks that contain {@code [pos, pos + copied)}: what a journaling adapter adds to its
     * transaction (gfs2's {@code gfs2_trans_add_databufs}, which logs the folio's buffer heads; the
     * kernel passes the folio). Position 0 is file offset {@code pos} rounded down to
     * {@link IomapInode#blockSize()}, the limit is those whole blocks (from {@code pos & -blockSize}
     * to {@code pos + copied} rounded up), and it is empty when {@code copied} is 0. Every byte in it is
     * uptodate, so it is what the block holds now and what writeback would write: a partial block at
     * either edge was read from the device or zeroed (a hole, unwritten or new block, or past EOF) by
     * the write before the copy, or the folio was uptodate already (the only case in which a short copy
     * is kept). Bytes past EOF in the last block are whatever the folio holds there (zeroes, unless a
     * mapped store put bytes past EOF); writeback zeroes them before it writes the block. The view is
     * made only when asked (an adapter that does not need the bytes pays nothing for them). Both the
     * supplier and the view are valid only during the call (asking the supplier afterwards may throw
     * {@link IllegalStateException}): the folio's memory is reused after it leaves the cache, so the
     * adapter copies what it keeps.
     *
     * <p>It may throw: a journal transaction may be full or its log unwritable. The bytes were already
     * copied, are dirty (and, for a write, in the file size), and readers may have seen them; the core
     * keeps them as written, stops the write after this folio, tells {@link IomapOps#end} the bytes
     * written including these, and throws the exception from the write (after unlocking the folio). The
     * caller can tell how far the write got from its buffer's position and the file size, as for any
     * other error in the middle of a write. The kernel's {@code put_folio} cannot fail; an adapter that
     * can reserve everything in {@link #getFolio} should, and fail there, before anything is copied.
     *
     * <p>Runs with the folio locked and the inode lock held: it must not wait for writeback of this
     * inode ({@link IomapInode#writeAndWait}, or a log flush that writes back ordered data), which
     * needs the folio lock.
     *
     * @param inode the file
     * @param pos file offset of the write into this folio
     * @param copied bytes accepted: copied into the folio, marked uptodate and dirty (for an
     *     {@code INLINE} mapping written through to the inline buffer instead of dirtied), and, for a
     *     write, counted in the file size already; fewer than {@code getFolio}'s {@code length} after a
     *     short copy, and 0 when nothing is kept (a short copy into a folio that was not uptodate, a
     *     stale mapping, or a failure before the copy)
     * @param iomap the mapping the write went through
     * @param blocks makes the read-only view of the whole blocks holding {@code [pos, pos + copied)},
     *     valid during the call only
     * @throws IOException to fail the write after this folio (its bytes stay written)
     */
    default void putFolio(IomapInode inode, long pos, int copied, Iomap iomap, Supplier<ByteBuffer> blocks)
            throws IOException {
    }

    /**
     * Whether a mapping obtained earlier still describes the file, checked with the folio locked
     * (the kernel's {@code iomap_valid} of {@code iomap_write_ops}). Return false if writeback or
     * truncate changed the extent map since; the core then asks {@link IomapOps#begin} again from the
     * current position. Seek and fiemap ask it too before they trust a hole over cached data. Called
     * with the folio locked and the inode lock held; it answers from memory.
     *
     * @param inode the file
     * @param iomap a mapping from {@link IomapOps#begin}
     * @return true if it may still be used (the default)
     */
    default boolean valid(IomapInode inode, Iomap iomap) {
        return true;
    }
}
