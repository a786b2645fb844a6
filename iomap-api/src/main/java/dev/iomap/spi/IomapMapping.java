package dev.iomap.spi;

import java.util.Objects;

/**
 * What {@link IomapOps#begin} returns: the mapping to act on and, for copy-on-write, the source
 * mapping to read old data from (the kernel's {@code iomap} and {@code srcmap}).
 *
 * @param iomap where data goes (for a write) or comes from (for a read)
 * @param srcmap where unchanged parts of partially written blocks come from; null when {@code iomap}
 *     serves for both
 */
public record IomapMapping(Iomap iomap, Iomap srcmap) {

    /** @throws NullPointerException if {@code iomap} is null */
    public IomapMapping {
        Objects.requireNonNull(iomap, "iomap");
    }

    /**
     * A mapping with no separate source.
     *
     * @param iomap the mapping
     * @return the pair
     */
    public static IomapMapping of(Iomap iomap) {
        return new IomapMapping(iomap, null);
    }

    /**
     * @return the mapping to read existing data through: {@code srcmap} if present, else {@code iomap}
     *     (the kernel's {@code iomap_iter_srcmap})
     */
    public Iomap readSource() {
        return srcmap != null ? srcmap : iomap;
    }
}
