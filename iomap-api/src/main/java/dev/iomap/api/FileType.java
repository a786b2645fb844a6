package dev.iomap.api;

/** What an inode is. */
public enum FileType {
    /** A regular file of bytes. */
    REGULAR,
    /** A directory of names. */
    DIRECTORY,
    /** A symbolic link: a path, kept as bytes, that path resolution follows. */
    SYMLINK;

    /**
     * @return the file-type bits of {@code st_mode} ({@code S_IFREG}, {@code S_IFDIR}, {@code S_IFLNK})
     */
    public int modeBits() {
        return switch (this) {
            case REGULAR -> 0100000;
            case DIRECTORY -> 0040000;
            case SYMLINK -> 0120000;
        };
    }
}
