package dev.iomap.api;

import java.util.Set;

/**
 * One extent of a file as {@link IomapFile#fiemap} reports it: the kernel's {@code struct fiemap_extent}.
 *
 * @param logical file offset of the first byte
 * @param physical device byte address of the first byte; 0 when {@link ExtentFlag#UNKNOWN} or
 *     {@link ExtentFlag#DATA_INLINE}
 * @param length bytes
 * @param flags what else is known; copied
 */
public record FileExtent(long logical, long physical, long length, Set<ExtentFlag> flags) {

    /** Copies the flags. */
    public FileExtent {
        flags = Set.copyOf(flags);
    }

    /** @return the first file offset past the extent */
    public long end() {
        return logical + length;
    }
}
