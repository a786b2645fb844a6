package dev.iomap.adapter.support.skeleton;

/** Why the skeleton asks a {@link BlockMapModel} to free blocks; a model frees the same way for each. */
public enum FreeReason {
    /** A truncate (the file's size went down, or a mount drops blocks past the size after a crash). */
    TRUNCATE,
    /** The inode lost its last name and open file. */
    EVICT,
    /** A write copied less than it asked for: blocks it allocated hold nothing and go back. */
    SHORT_WRITE,
    /** The write-back of freshly allocated blocks failed: they hold nothing and go back. */
    FAILED_WRITE
}
