package dev.iomap.spi;

/** Why the core calls {@link IomapOps#begin}; the kernel's {@code IOMAP_WRITE}, {@code IOMAP_ZERO}, ... */
public enum IomapRequest {
    /** A buffered write will land in the range: the adapter may reserve space (delayed allocation). */
    WRITE,
    /** The range is being zeroed: holes and unwritten extents need nothing. */
    ZERO,
    /** Only a report of what is there (seek data/hole, fiemap): allocate nothing. */
    REPORT,
    /** A write through a mapped region (page fault on a shared writable mapping). */
    FAULT,
    /** The caller cannot block; an adapter that would have to wait throws instead. */
    NOWAIT,
    /** Copy shared blocks to private ones (unshare), reading even whole folios. */
    UNSHARE
}
