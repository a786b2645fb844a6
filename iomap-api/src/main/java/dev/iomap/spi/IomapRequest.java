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
     * The caller cannot block; an adapter that would have to wait throws instead
     * ({@code IOMAP_NOWAIT}). Not sent by the core yet (no non-blocking writes).
     */
    NOWAIT,
    /** Copy shared blocks to private ones (unshare), reading even whole folios; {@code IOMAP_UNSHARE}. */
    UNSHARE
}
