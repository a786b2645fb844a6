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
     * Only a report of what is there (seek data/hole, fiemap): allocate nothing
     * ({@code IOMAP_REPORT}). Not sent by the core yet (seek and fiemap are not modelled).
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
