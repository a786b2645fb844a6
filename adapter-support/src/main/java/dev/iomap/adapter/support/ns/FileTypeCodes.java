package dev.iomap.adapter.support.ns;

import dev.iomap.api.FileType;

/**
 * The one-byte codes of file types stored in directory entries (and, if an adapter likes, in inodes):
 * 1 regular file, 2 directory, 3 symbolic link, 4 FIFO, 5 character device, 6 block device, 7 socket.
 * 0 is never a type (adapters use it for a free inode slot). Stateless.
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
    /** Code of {@link FileType#FIFO}. */
    public static final int FIFO = 4;
    /** Code of {@link FileType#CHARACTER_DEVICE}. */
    public static final int CHARACTER_DEVICE = 5;
    /** Code of {@link FileType#BLOCK_DEVICE}. */
    public static final int BLOCK_DEVICE = 6;
    /** Code of {@link FileType#SOCKET}. */
    public static final int SOCKET = 7;

    private FileTypeCodes() {
    }

    /**
     * @param type a file type
     * @return its code, 1 to 7
     */
    public static int code(FileType type) {
        return switch (type) {
            case REGULAR -> REGULAR;
            case DIRECTORY -> DIRECTORY;
            case SYMLINK -> SYMLINK;
            case FIFO -> FIFO;
            case CHARACTER_DEVICE -> CHARACTER_DEVICE;
            case BLOCK_DEVICE -> BLOCK_DEVICE;
            case SOCKET -> SOCKET;
        };
    }

    /**
     * @param code a code read from the device
     * @return the type it names, or null if it names none (0 or anything above 7): the caller reports
     *     that as corruption
     */
    public static FileType typeOf(int code) {
        return switch (code) {
            case REGULAR -> FileType.REGULAR;
            case DIRECTORY -> FileType.DIRECTORY;
            case SYMLINK -> FileType.SYMLINK;
            case FIFO -> FileType.FIFO;
            case CHARACTER_DEVICE -> FileType.CHARACTER_DEVICE;
            case BLOCK_DEVICE -> FileType.BLOCK_DEVICE;
            case SOCKET -> FileType.SOCKET;
            default -> null;
        };
    }
}
