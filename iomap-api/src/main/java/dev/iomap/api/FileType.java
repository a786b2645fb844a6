package dev.iomap.api;

/** What an inode is. */
public enum FileType {
    /** A regular file of bytes. */
    REGULAR,
    /** A directory of names. */
    DIRECTORY
}
