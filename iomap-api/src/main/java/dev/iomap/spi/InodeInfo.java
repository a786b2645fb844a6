package dev.iomap.spi;

import dev.iomap.api.FileType;

/**
 * What an adapter knows of an inode.
 *
 * @param ino inode number
 * @param type regular file or directory
 * @param size the size on the device (what survives a crash)
 * @param allocatedBytes bytes of device space held
 * @param linkCount names pointing at it
 * @param modifiedMillis last modification time
 */
public record InodeInfo(long ino, FileType type, long size, long allocatedBytes, int linkCount,
        long modifiedMillis) {
}
