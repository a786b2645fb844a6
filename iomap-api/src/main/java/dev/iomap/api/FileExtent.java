package dev.iomap.api;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * One extent of a file's data as {@link IomapFile#fiemap} reports it: the kernel's
 * {@code struct fiemap_extent} ({@code include/uapi/linux/fiemap.h}), in bytes.
 *
 * <p>Immutable. {@code physical} is the device byte address of {@code logical}; it is 0 where the
 * data has no place on the device yet ({@link Flag#DELALLOC}) or lives in metadata
 * ({@link Flag#DATA_INLINE}), as the kernel reports it.
 *
 * @param logical file offset of the first byte, at least 0
 * @param physical device byte address of the first byte, at least 0 (0 where unknown, see above)
 * @param length bytes, at least 1
 * @param flags what kind of extent it is; copied (iterated in the enum's order), never null
 */
public record FileExtent(long logical, long physical, long length, Set<Flag> flags) {

    /**
     * The kernel's {@code FIEMAP_EXTENT_*} flags that this engine reports, with their bit values, so
     * a report can be printed as {@code xfs_io -c "fiemap -v"} prints it.
     */
    public enum Flag {
        /** The last extent of the range asked for ({@code FIEMAP_EXTENT_LAST}). */
        LAST(0x1),
        /** The location is not known yet ({@code FIEMAP_EXTENT_UNKNOWN}); set with {@link #DELALLOC}. */
        UNKNOWN(0x2),
        /** Data reserved or cached but not yet allocated on the device ({@code FIEMAP_EXTENT_DELALLOC}). */
        DELALLOC(0x4),
        /** The data is not block aligned on the device ({@code FIEMAP_EXTENT_NOT_ALIGNED}); set with {@link #DATA_INLINE}. */
        NOT_ALIGNED(0x100),
        /** The data is stored inside metadata, such as the inode ({@code FIEMAP_EXTENT_DATA_INLINE}). */
        DATA_INLINE(0x200),
        /** Allocated but never written: it reads as zeroes ({@code FIEMAP_EXTENT_UNWRITTEN}). */
        UNWRITTEN(0x800),
        /** The blocks are shared with another file or range, e.g. by a reflink ({@code FIEMAP_EXTENT_SHARED}). */
        SHARED(0x2000);

        private final int bit;

        Flag(int bit) {
            this.bit = bit;
        }

        /** @return the kernel's value of the flag */
        public int bit() {
            return bit;
        }
    }

    /**
     * Checks the invariants above and copies {@code flags}.
     *
     * @throws IllegalArgumentException for a negative offset or address or an empty or overflowing range
     */
    public FileExtent {
        Objects.requireNonNull(flags, "flags");
        if (logical < 0 || physical < 0 || length <= 0 || logical + length < 0) {
            throw new IllegalArgumentException("bad extent logical=" + logical + " physical=" + physical
                    + " length=" + length);
        }
        EnumSet<Flag> copy = EnumSet.noneOf(Flag.class);
        copy.addAll(flags);
        flags = Collections.unmodifiableSet(copy);
    }

    /** @return the file offset just past the extent */
    public long end() {
        return logical + length;
    }

    /** @return whether the extent has {@code flag} */
    public boolean has(Flag flag) {
        return flags.contains(flag);
    }

    /** @return the flags as the kernel's bit mask ({@code fe_flags}) */
    public int fiemapFlags() {
        int mask = 0;
        for (Flag flag : flags) {
            mask |= flag.bit;
        }
        return mask;
    }

    /**
     * @param flag the flag to add
     * @return this extent with {@code flag} set as well
     */
    public FileExtent with(Flag flag) {
        EnumSet<Flag> more = EnumSet.noneOf(Flag.class);
        more.addAll(flags);
        more.add(flag);
        return new FileExtent(logical, physical, length, more);
    }
}
