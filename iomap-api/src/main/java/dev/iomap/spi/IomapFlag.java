package dev.iomap.spi;

/**
 * Flags on an {@link Iomap}: the kernel's {@code IOMAP_F_*}. The core acts on {@link #NEW},
 * {@link #SHARED} and {@link #BOUNDARY}; the others are carried for adapters and kept for the
 * kernel's vocabulary, but the core neither sets nor reads them (see each).
 */
public enum IomapFlag {
    /**
     * The blocks were just allocated: their old contents must never be read, zero instead
     * ({@code IOMAP_F_NEW}).
     */
    NEW,
    /**
     * The inode has metadata changes not yet durable; fdatasync must write them
     * ({@code IOMAP_F_DIRTY}). The core does not read it: fdatasync always calls the adapter's
     * {@link FileOps#fsync}.
     */
    DIRTY,
    /**
     * The blocks are shared with another file (reflink): writes go to a copy-on-write destination
     * ({@code IOMAP_F_SHARED}).
     */
    SHARED,
    /** An ioend must not be merged across the start of this mapping ({@code IOMAP_F_BOUNDARY}). */
    BOUNDARY,
    /**
     * Writeback may let the device choose where data lands (zone append); the address is a zone
     * start ({@code IOMAP_F_ANON_WRITE}). Not supported by the core yet: writeback writes at the
     * mapped address.
     */
    ANON_WRITE,
    /**
     * The mapping must be looked up again ({@code IOMAP_F_STALE}). The core does not set it: when
     * {@link WriteOps#valid} rejects a mapping it marks its iterator stale instead and asks
     * {@link IomapOps#begin} again.
     */
    STALE,
    /**
     * The operation changed the file size ({@code IOMAP_F_SIZE_CHANGED}). Not set by the core:
     * {@link IomapOps#end} is not told.
     */
    SIZE_CHANGED
}
