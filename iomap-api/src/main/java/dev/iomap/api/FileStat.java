package dev.iomap.api;

/**
 * What {@code stat} says of a file.
 *
 * @param ino inode number, unique within the mounted filesystem
 * @param type regular file or directory
 * @param size bytes (for a directory: as the adapter reports it)
 * @param allocatedBytes bytes of device space the file holds (data and reservations)
 * @param linkCount names pointing at the inode
 * @param modifiedMillis last modification, milliseconds since the epoch
 */
public record FileStat(long ino, FileType type, long size, long allocatedBytes, int linkCount, long modifiedMillis) {

    /** @return whether this is a directory */
    public boolean isDirectory() {
        return type == FileType.DIRECTORY;
    }
}
