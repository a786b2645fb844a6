package dev.iomap.api;

/** What a {@link FileExtent} reports beyond its place: the kernel's {@code FIEMAP_EXTENT_*} flags. */
public enum ExtentFlag {
    /** The last extent of the file ({@code FIEMAP_EXTENT_LAST}). */
    LAST,
    /** The device location is not known yet; {@link FileExtent#physical()} is 0 ({@code FIEMAP_EXTENT_UNKNOWN}). */
    UNKNOWN,
    /** Space reserved, not allocated yet (delayed allocation); also {@link #UNKNOWN} ({@code FIEMAP_EXTENT_DELALLOC}). */
    DELALLOC,
    /** Allocated but not written: reads as zeroes ({@code FIEMAP_EXTENT_UNWRITTEN}). */
    UNWRITTEN,
    /** The data lives inside the metadata; also {@link #NOT_ALIGNED} ({@code FIEMAP_EXTENT_DATA_INLINE}). */
    DATA_INLINE,
    /** The data is not block aligned on the device ({@code FIEMAP_EXTENT_NOT_ALIGNED}). */
    NOT_ALIGNED,
    /** The blocks are shared with another file (reflink) ({@code FIEMAP_EXTENT_SHARED}). */
    SHARED
}
