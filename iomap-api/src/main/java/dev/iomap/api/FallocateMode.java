package dev.iomap.api;

/** The kinds of {@code fallocate}. */
public enum FallocateMode {
    /** Reserve blocks (as unwritten extents) so later writes cannot fail for space; reads give zeroes. */
    ALLOCATE,
    /** Free the blocks of the range; it reads as zeroes; never changes the size. */
    PUNCH_HOLE,
    /** Make the range read as zeroes, keeping it allocated (unwritten). */
    ZERO_RANGE
}
