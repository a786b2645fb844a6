package dev.iomap.spi;

/** Flags an adapter sets on an {@link Iomap}; the kernel's {@code IOMAP_F_*}. */
public enum IomapFlag {
    /** The blocks were just allocated: their old contents must never be read (zero instead). */
    NEW,
    /** The inode has metadata changes not yet durable; fdatasync must write them. */
    DIRTY,
    /** The blocks are shared with another file (reflink): writes go to a copy-on-write destination. */
    SHARED,
    /** An ioend must not be merged across the end of this mapping. */
    BOUNDARY,
    /** Writeback may let the device choose where data lands (zone append); the address is a zone start. */
    ANON_WRITE,
    /** Set by the core when {@link IomapOps#valid} rejected the mapping and it must be looked up again. */
    STALE,
    /** The operation changed the file size. */
    SIZE_CHANGED
}
