package dev.iomap.fuse;

import java.time.Instant;

/**
 * What the kernel is told of an inode: the fields of {@code struct stat} the mount fills
 * ({@link FuseStructs#fillStat}).
 *
 * @param ino the file system's inode number ({@code st_ino})
 * @param mode {@code st_mode}: type and permission bits
 * @param linkCount names of the inode
 * @param uid owner
 * @param gid group
 * @param size bytes
 * @param allocatedBytes bytes of device space held ({@code st_blocks} is this in 512-byte units, rounded up)
 * @param blockSize the preferred I/O size ({@code st_blksize})
 * @param atime last access
 * @param mtime last change of the contents
 * @param ctime last change of the contents or the inode
 * @param rdev a device node's number ({@code st_rdev}), else 0
 */
record Attributes(long ino, int mode, int linkCount, int uid, int gid, long size, long allocatedBytes,
        int blockSize, Instant atime, Instant mtime, Instant ctime, long rdev) {
}
