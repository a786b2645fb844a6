package dev.iomap.api;

/** What an inode is. */
public enum FileType {
    /** A regular file of bytes. */
    REGULAR,
    /** A directory of names. */
    DIRECTORY,
    /** A symbolic link: a path, kept as bytes, that path resolution follows. */
    SYMLINK,
    /** A named pipe ({@code mkfifo}): no data on the device; the kernel joins its readers and writers. */
    FIFO,
    /** A character device node: no data on the device, a device number ({@link FileStat#rdev}). */
    CHARACTER_DEVICE,
    /** A block device node: no data on the device, a device number ({@link FileStat#rdev}). */
    BLOCK_DEVICE,
    /** A Unix-domain socket's name ({@code bind}): no data on the device. */
    SOCKET;

    /**
     * @return the file-type bits of {@code st_mode} ({@code S_IFREG}, {@code S_IFDIR}, {@code S_IFLNK},
     *     {@code S_IFIFO}, {@code S_IFCHR}, {@code S_IFBLK}, {@code S_IFSOCK})
     */
    public int modeBits() {
        return switch (this) {
            case REGULAR -> 0100000;
            case DIRECTORY -> 0040000;
            case SYMLINK -> 0120000;
            case FIFO -> 0010000;
            case CHARACTER_DEVICE -> 0020000;
            case BLOCK_DEVICE -> 0060000;
            case SOCKET -> 0140000;
        };
    }

    /**
     * @return whether this is a special file (a FIFO, a device node or a socket): an inode with a type,
     *     attributes, names and (a device node) a device number, but no data of its own
     */
    public boolean isSpecial() {
        return switch (this) {
            case FIFO, CHARACTER_DEVICE, BLOCK_DEVICE, SOCKET -> true;
            case REGULAR, DIRECTORY, SYMLINK -> false;
        };
    }

    /** @return whether this is a device node, the one type with a device number ({@link FileStat#rdev}) */
    public boolean isDevice() {
        return this == CHARACTER_DEVICE || this == BLOCK_DEVICE;
    }

    /**
     * @param modeBits the {@code S_IFMT} bits of a mode (other bits are ignored)
     * @return the type they name
     * @throws IllegalArgumentException if they name none
     */
    public static FileType ofModeBits(int modeBits) {
        int format = modeBits & 0170000;
        for (FileType type : values()) {
            if (type.modeBits() == format) {
                return type;
            }
        }
        throw new IllegalArgumentException("no file type has the mode bits 0" + Integer.toOctalString(format));
    }
}
