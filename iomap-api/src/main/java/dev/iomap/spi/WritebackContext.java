package dev.iomap.spi;

import java.io.IOException;

/**
 * One writeback pass over one file as {@link WritebackOps#writebackRange} sees it: the kernel's
 * {@code struct iomap_writepage_ctx}. Implemented by the core only; adapters call it and never
 * implement it.
 *
 * <p>The pass owns the ioend being built ({@code wpc->wb_ctx}); {@link #addToIoend} adds a range of the
 * folio the pass is writing to it, or, when the range cannot be merged into it, submits it through
 * {@link WritebackOps#writebackSubmit} and starts the next one. Used by one thread at a time (the
 * thread of the pass), and only during a {@link WritebackOps#writebackRange} call of that pass.
 */
public interface WritebackContext {

    /** @return the file written back */
    IomapInode inode();

    /**
     * The mapping given to the last {@link #addToIoend} of this pass (the kernel's {@code wpc->iomap}),
     * or null before the first. An adapter may add the next range through it without mapping again,
     * when it contains the range's first byte and is still valid (its extent map has not changed since:
     * compare its validity cookie), as XFS's {@code xfs_imap_valid} does.
     *
     * @return the cached mapping, or null
     */
    Iomap iomap();

    /**
     * Adds dirty bytes of the folio being written back, mapped by {@code iomap}, to the ioend (the
     * kernel's {@code iomap_add_to_ioend}): all {@code min(length, iomap.end() - pos)} of them, clipped
     * to the range being written back. The bytes extend the ioend being built when they continue it in
     * the file and on the device, with the same type and flags, not at the start of a
     * {@link IomapFlag#BOUNDARY} mapping, and within its size limit
     * ({@code PageCacheOptions.maxIoendBytes()}); otherwise that ioend is submitted
     * ({@link WritebackOps#writebackSubmit}) and a new one starts with them, as often as the size limit
     * requires. The folio stays under writeback until every ioend holding its bytes completes.
     * {@code iomap} becomes {@link #iomap()}.
     *
     * <p>Since it may submit, it may run {@link WritebackOps#writebackSubmit} and, when the device
     * completes the write before returning it, {@link WritebackOps#ioendCompleted} on this thread: call
     * it without holding a lock that those take (map under the adapter's lock, release it, then add).
     *
     * @param iomap a {@link IomapType#MAPPED} or {@link IomapType#UNWRITTEN} mapping containing
     *     {@code pos}
     * @param pos the first byte to add: the {@code pos} of the current {@code writebackRange} call, or
     *     past it by what earlier {@code addToIoend} calls of that call added
     * @param length bytes of the dirty range from {@code pos}, at least 1
     * @return the bytes added, at least 1 and at most {@code length}; {@code writebackRange} returns
     *     the sum of what its calls returned
     * @throws IOException ({@link dev.iomap.api.IomapException}) if {@code iomap} does not contain
     *     {@code pos} or is of another type (writeback of {@link IomapType#INLINE} data never happens:
     *     it is written through at write time), if {@code pos} is not the next byte of the range being
     *     written back, or if called outside {@code writebackRange}
     */
    long addToIoend(Iomap iomap, long pos, long length) throws IOException;
}
