package dev.iomap.adapter.support.ns;

import dev.iomap.api.FileType;

/**
 * The one-byte codes of file types stored in directory entries (and, if an adapter likes, in inodes):
 * 1 regular file, 2 directory, 3 symbolic link. 0 is never a type (adapters use it for a free inode
 * slot). Stateless.
 */
public final class FileTypeCodes {
    /** Code of no type: a free inode slot. */
    public static final int FREE = 0;
    /** Code of {@link FileType#REGULAR}. */
    public static final int REGULAR = 1;
    /** Code of {@link FileType#DIRECTORY}. */
    public static final int DIRECTORY = 2;
    /** Code of {@link FileType#SYMLINK}. */
    public static final int SYMLINK = 3;

    private FileTypeCodes() {
    }

    /**
     * @param type a file type
     * @return its code, 1 to 3
     */
    public static int code(FileType type) {
        return switch (type) {
            case REGULAR -> REGULAR;
            case DIRECTORY -> DIRECTORY;
            case SYMLINK -> SYMLINK;
        };
    }

    /**
     * @param code a code read from the device
     * @return the type it names, or null if it names none (0 or anything above 3): the caller reports
     *     that as corruption
     */
    public static FileType typeOf(int code) {
        return switch (code) {
            case REGULAR -> FileType.REGULAR;
            case DIRECTORY -> FileType.DIRECTORY;
            case SYMLINK -> FileType.SYMLINK;
            default -> null;
        };
    }
}
