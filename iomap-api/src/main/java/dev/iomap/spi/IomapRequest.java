package dev.iomap.spi;

/** Why the core calls {@link IomapOps#begin}; the kernel's {@code IOMAP_WRITE}, {@code IOMAP_ZERO}, ... */
public enum IomapRequest {
    /**
     * A buffered write will land in the range: the adapter may reserve space (delayed allocation);
     * {@code IOMAP_WRITE}.
     */
    WRITE,
    /** The range is being zeroed: holes and unwritten extents need nothing ({@code IOMAP_ZERO}). */
    ZERO,
    /**
     * Only a report of what is there ({@code IOMAP_REPORT}), sent alone by the core's seek data and
     * seek hole (and, later, fiemap). The adapter must reserve, allocate, convert and write nothing,
     * and may be called with the inode lock held shared, concurrently with reads and writeback.
     * {@link IomapType#HOLE} and {@link IomapType#UNWRITTEN} are reported as holes except where the
     * page cache holds data over them; {@link IomapType#DELALLOC}, {@link IomapType#MAPPED} and
     * {@link IomapType#INLINE} as data. An adapter that has staged data elsewhere (a copy-on-write
     * fork over a hole) reports {@code UNWRITTEN} there, so the core looks in the cache, as XFS does.
     */
    REPORT,
    /** A write through a mapped region (page fault on a shared writable mapping); {@code IOMAP_FAULT}. */
    FAULT,
    /**
     * The caller must not wait for other threads; an adapter that would have to (for a cluster lock,
     * say) throws an {@link java.io.IOException} at once instead ({@code IOMAP_NOWAIT}). The core sends
     * it for readahead, which maps while it holds its folios locked on a pool thread of its own, where
     * the kernel's readahead runs in the reader's context under the reader's locks: waiting there for a
     * lock whose release waits for those folios (a cluster lock's demotion invalidating the cache)
     * would deadlock. The readahead then leaves the folio to be read on demand. Short in-memory locks
     * may still be taken.
     */
    NOWAIT,
    /** Copy shared blocks to private ones (unshare), reading even whole folios; {@code IOMAP_UNSHARE}. */
    UNSHARE,
    /**
     * The range is read or written directly, bypassing the page cache ({@code IOMAP_DIRECT}, from the
     * core's {@code iomap_dio_rw} model), sent only to adapters declaring
     * {@link dev.iomap.api.Capability#DIRECT_IO}. For a direct read it comes alone; for a direct
     * write together with {@link #WRITE}. The range is block aligned and the core has written back
     * and dropped the cache over it.
     *
     * <p>A direct read is answered as a plain read: {@link IomapType#HOLE} and
     * {@link IomapType#UNWRITTEN} read as zeroes, {@link IomapType#MAPPED} is read through the
     * adapter's {@link IomapOps#readOps()} into the caller's buffer, {@link IomapType#INLINE} is
     * copied from the inline buffer; {@link IomapType#DELALLOC} reads as zeroes (the core wrote back
     * the range first, so a reservation left there holds no data).
     *
     * <p>A direct write must be answered with real blocks, because the core writes the caller's bytes
     * to {@link Iomap#address()} before {@link IomapOps#end} returns and never caches them:
     * <ul>
     *   <li>{@link IomapType#MAPPED} over written blocks the file owns alone (an overwrite: the core
     *       writes in place and the completion has only the size to record);</li>
     *   <li>{@link IomapType#UNWRITTEN} over preallocated blocks, or over blocks allocated now for a
     *       hole or a delayed allocation (allocating them unwritten, as XFS does, keeps stale blocks
     *       unreadable after a crash before the data lands); converted to written at completion;</li>
     *   <li>{@link IomapFlag#SHARED} with a private destination for blocks shared with another file
     *       (copy on write; no srcmap is needed, the write covers whole blocks); remapped at
     *       completion;</li>
     *   <li>{@link IomapType#INLINE} where the adapter keeps the range inline: the core copies the
     *       bytes into the inline buffer and raises the size, and the adapter persists them in
     *       {@code end}, as for a buffered write.</li>
     * </ul>
     * {@link IomapType#HOLE} and {@link IomapType#DELALLOC} are refused with an
     * {@link dev.iomap.api.IomapException} (the kernel's WARN and EIO). The core sends each written
     * run through {@link WritebackOps#writebackSubmit} as an ioend (so an adapter that journals,
     * checksums or compresses at submission does so here too, the kernel's
     * {@code iomap_dio_ops->submit_io}), and when its device write has completed raises the in-memory
     * size over it (if it extends the file, and only for the runs that succeeded up to the first
     * failure) and calls {@link WritebackOps#ioendCompleted} with the run's type, flags, address and
     * error: the kernel's {@code iomap_dio_ops->end_io}, which converts unwritten extents, remaps copy
     * on write and persists the size. A run that was written but follows a failed one completes with
     * an error too, so nothing of a failed direct write is converted past the failure.
     *
     * <p>Locking: the core holds the inode lock exclusively for a direct write that extends the file
     * or meets anything but {@code MAPPED} blocks without {@code SHARED} (it first asks with
     * {@link #REPORT}); a pure overwrite within EOF runs under the shared inode lock, concurrently with
     * other such writes of the file and with reads, so the adapter's {@code begin}, {@code end},
     * submission and completion for it must lock whatever they change themselves, as writeback's
     * {@link WritebackOps#writebackRange} and {@link WritebackOps#ioendCompleted} already do (an adapter
     * that never overwrites in place allocates there). An adapter may also decline the direct path
     * for a range with {@link DirectFallbackException} (GFS2's {@code -ENOTBLK}).
     */
    DIRECT,
    /**
     * With {@link #WRITE} and {@link #DIRECT}: the direct write is atomic ({@code IOMAP_ATOMIC}, asked
     * only of an adapter declaring {@link dev.iomap.api.Capability#ATOMIC_WRITES}). The adapter maps
     * every block of the range out of place, so that the old bytes stay where the file's mapping
     * points until the write completes (the software atomic write of XFS, 6.16: blocks staged in the
     * COW fork); the core holds the inode lock exclusively, never falls back to buffered I/O
     * ({@link DirectFallbackException} fails the write), refuses {@link IomapType#INLINE}, and ends
     * the write with one {@link WritebackOps#atomicWriteCompleted} for all its runs instead of
     * {@link WritebackOps#ioendCompleted} for each.
     */
    ATOMIC
}
