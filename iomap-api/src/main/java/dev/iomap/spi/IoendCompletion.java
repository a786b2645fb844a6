package dev.iomap.spi;

import java.io.IOException;
import java.util.Set;

/**
 * A finished ioend as {@link WritebackOps#ioendCompleted} sees it: one contiguous file range written
 * to one contiguous device range through mappings of one type and one set of flags (what a
 * filesystem's completion, such as the kernel's {@code xfs_end_ioend}, reads from
 * {@code struct iomap_ioend}).
 *
 * @param offset file offset of the first byte written
 * @param length bytes written
 * @param type the mapping type the data was written through ({@code MAPPED} or {@code UNWRITTEN})
 * @param flags the mapping's flags (e.g. {@link IomapFlag#SHARED} for copy-on-write)
 * @param address device byte address of {@code offset}
 * @param error the device error, or null if the write succeeded
 */
public record IoendCompletion(
        long offset, long length, IomapType type, Set<IomapFlag> flags, long address, IOException error) {

    /** Copies the flags. */
    public IoendCompletion {
        flags = Set.copyOf(flags);
    }

    /** @return whether the device write failed */
    public boolean failed() {
        return error != null;
    }

    /** @return the first file offset past the range */
    public long end() {
        return offset + length;
    }
}
