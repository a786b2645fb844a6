package dev.iomap.spi;

import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import java.time.Instant;
import java.util.Objects;

/**
 * What an adapter knows of an inode. The times and their meaning are {@link dev.iomap.api.FileStat}'s.
 *
 * @param ino inode number
 * @param type regular file, directory or symbolic link
 * @param size the size on the device (what survives a crash); a symbolic link's target length
 * @param allocatedBytes bytes of device space held
 * @param linkCount names pointing at it
 * @param mode permission bits, {@code 07777} at most
 * @param uid owner
 * @param gid group
 * @param atime access time
 * @param mtime modification time
 * @param ctime change time
 * @param btime creation time
 */
public record InodeInfo(long ino, FileType type, long size, long allocatedBytes, int linkCount, int mode, int uid,
        int gid, Instant atime, Instant mtime, Instant ctime, Instant btime) {

    /** @throws IllegalArgumentException if {@code mode} has bits outside {@code 07777} */
    public InodeInfo {
        Objects.requireNonNull(type, "type");
        NewInodeAttributes.checkMode(mode);
        Objects.requireNonNull(atime, "atime");
        Objects.requireNonNull(mtime, "mtime");
        Objects.requireNonNull(ctime, "ctime");
        Objects.requireNonNull(btime, "btime");
    }

    /**
     * The attributes of an adapter without {@link dev.iomap.api.Capability#POSIX_ATTRIBUTES}: the type's
     * default mode ({@link NewInodeAttributes#defaultMode}), uid and gid 0, and {@code modifiedMillis}
     * as all four times.
     *
     * @param ino inode number
     * @param type regular file or directory
     * @param size the size on the device
     * @param allocatedBytes bytes of device space held
     * @param linkCount names pointing at it
     * @param modifiedMillis last modification, milliseconds since the epoch
     */
    public InodeInfo(long ino, FileType type, long size, long allocatedBytes, int linkCount, long modifiedMillis) {
        this(ino, type, size, allocatedBytes, linkCount, NewInodeAttributes.defaultMode(type), 0, 0,
                Instant.ofEpochMilli(modifiedMillis), Instant.ofEpochMilli(modifiedMillis),
                Instant.ofEpochMilli(modifiedMillis), Instant.ofEpochMilli(modifiedMillis));
    }

    /** @return the modification time in milliseconds since the epoch */
    public long modifiedMillis() {
        return mtime.toEpochMilli();
    }
}
