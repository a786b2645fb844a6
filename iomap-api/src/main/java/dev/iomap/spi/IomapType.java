package dev.iomap.spi;

/**
 * What lives behind a file range, as an adapter reports it in an {@link Iomap}. The kernel's
 * {@code IOMAP_HOLE}, {@code IOMAP_DELALLOC}, {@code IOMAP_MAPPED}, {@code IOMAP_UNWRITTEN},
 * {@code IOMAP_INLINE}.
 */
public enum IomapType {
    /** No blocks: reads return zeroes; a buffered write zeroes the parts of blocks it does not cover. */
    HOLE,
    /** Space reserved but not yet allocated (delayed allocation): real blocks come at writeback. */
    DELALLOC,
    /** Allocated blocks holding data at {@link Iomap#address()}. */
    MAPPED,
    /** Allocated blocks not yet written: read as zeroes, converted to {@link #MAPPED} at I/O completion. */
    UNWRITTEN,
    /**
     * Data stored inside the metadata ({@link Iomap#inlineData()}), not in blocks of its own; the core
     * writes through to it and never writes it back (see {@link Iomap}, "Inline data").
     */
    INLINE;

    /**
     * Whether a block of this type reads back as zeroes from the device's point of view, so a partial
     * write into it must zero the rest of the block instead of reading it (the type test of the
     * kernel's {@code iomap_block_needs_zeroing}).
     *
     * @return true for {@link #HOLE}, {@link #UNWRITTEN} and {@link #DELALLOC}
     */
    public boolean readsAsZeroes() {
        return this == HOLE || this == UNWRITTEN || this == DELALLOC;
    }
}
