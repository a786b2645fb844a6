package dev.iomap.api;

import java.time.Instant;
import java.util.Objects;

/**
 * What {@code stat} says of a file, and what an adapter says of an inode ({@code
 * MountedFileSystem.getattr}, whose {@code size} is the size on the device, what survives a crash; the
 * core's {@code stat} reports the size of the cached inode instead, through {@link #withSize}).
 *
 * <p>Times carry nanoseconds. {@code atime} is kept but not advanced by reads (mounts behave as
 * {@code noatime}); {@code mtime} and {@code ctime} advance on writes and truncates, {@code ctime}
 * also on every attribute, link-count or extended-attribute change; {@code btime} is set at creation
 * and never changes. An adapter without {@link Capability#POSIX_ATTRIBUTES} reports mode
 * {@link NewInodeAttributes#defaultMode(FileType)}, uid and gid 0, and its one modification time in
 * all four times.
 *
 * @param ino inode number, unique within the mounted filesystem
 * @param type regular file, directory, symbolic link or special file
 * @param size bytes (a directory: as the adapter reports it; a symbolic link: its target's length)
 * @param allocatedBytes bytes of device space the file holds (data and reservations)
 * @param linkCount names pointing at the inode
 * @param mode permission bits, {@code 07777} at most (set-user-ID, set-group-ID, sticky and the nine
 *     rwx bits); the type is in {@code type}
 * @param uid owner
 * @param gid group
 * @param atime last access, as kept on the device
 * @param mtime last change of the contents
 * @param ctime last change of the contents or of the inode (attributes, names, extended attributes)
 * @param btime creation (birth)
 * @param atomicWrite what atomic writes the file takes ({@code statx}'s {@code STATX_WRITE_ATOMIC}
 *     fields): {@link AtomicWriteLimits#NONE} but for a regular file of an adapter with
 *     {@link Capability#ATOMIC_WRITES}
 * @param rdev a device node's device number ({@code st_rdev}, Linux's encoding: {@link DeviceNumber});
 *     0 for every other type
 */
public record FileStat(long ino, FileType type, long size, long allocatedBytes, int linkCount, int mode, int uid,
        int gid, Instant atime, Instant mtime, Instant ctime, Instant btime, AtomicWriteLimits atomicWrite,
        long rdev) {

    /**
     * @throws IllegalArgumentException if {@code mode} has bits outside {@code 07777}, or {@code rdev} is
     *     not 0 for a type other than a device node
     * @throws NullPointerException if a time, the type or the atomic write limits are null
     */
    public FileStat {
        Objects.requireNonNull(type, "type");
        NewInodeAttributes.checkMode(mode);
        if (rdev != 0 && !type.isDevice()) {
            throw new IllegalArgumentException("a " + type + " has no device number, not " + rdev);
        }
        Objects.requireNonNull(atime, "atime");
        Objects.requireNonNull(mtime, "mtime");
        Objects.requireNonNull(ctime, "ctime");
        Objects.requireNonNull(btime, "btime");
        Objects.requireNonNull(atomicWrite, "atomicWrite");
    }

    /**
     * A stat of anything but a device node (device number 0); the parameters are the record's.
     *
     * @param ino inode number
     * @param type what it is
     * @param size bytes
     * @param allocatedBytes bytes of device space held
     * @param linkCount names pointing at it
     * @param mode permission bits
     * @param uid owner
     * @param gid group
     * @param atime last access
     * @param mtime last change of the contents
     * @param ctime last change of contents or inode
     * @param btime creation
     * @param atomicWrite what atomic writes the file takes
     */
    public FileStat(long ino, FileType type, long size, long allocatedBytes, int linkCount, int mode, int uid,
            int gid, Instant atime, Instant mtime, Instant ctime, Instant btime, AtomicWriteLimits atomicWrite) {
        this(ino, type, size, allocatedBytes, linkCount, mode, uid, gid, atime, mtime, ctime, btime, atomicWrite, 0);
    }

    /**
     * A stat without atomic writes ({@link AtomicWriteLimits#NONE}); the parameters are the record's.
     *
     * @param ino inode number
     * @param type what it is
     * @param size bytes
     * @param allocatedBytes bytes of device space held
     * @param linkCount names pointing at it
     * @param mode permission bits
     * @param uid owner
     * @param gid group
     * @param atime last access
     * @param mtime last change of the contents
     * @param ctime last change of contents or inode
     * @param btime creation
     */
    public FileStat(long ino, FileType type, long size, long allocatedBytes, int linkCount, int mode, int uid,
            int gid, Instant atime, Instant mtime, Instant ctime, Instant btime) {
        this(ino, type, size, allocatedBytes, linkCount, mode, uid, gid, atime, mtime, ctime, btime,
                AtomicWriteLimits.NONE);
    }

    /**
     * The stat of a filesystem without {@link Capability#POSIX_ATTRIBUTES}: the type's default mode
     * ({@link NewInodeAttributes#defaultMode}), uid and gid 0, {@code modifiedMillis} as all four times.
     *
     * @param ino inode number
     * @param type what it is
     * @param size bytes
     * @param allocatedBytes bytes of device space held
     * @param linkCount names pointing at it
     * @param modifiedMillis last modification, milliseconds since the epoch
     */
    public FileStat(long ino, FileType type, long size, long allocatedBytes, int linkCount, long modifiedMillis) {
        this(ino, type, size, allocatedBytes, linkCount, NewInodeAttributes.defaultMode(type), 0, 0,
                Instant.ofEpochMilli(modifiedMillis), Instant.ofEpochMilli(modifiedMillis),
                Instant.ofEpochMilli(modifiedMillis), Instant.ofEpochMilli(modifiedMillis));
    }

    /**
     * @param newSize the size to report, at least 0
     * @return these attributes with {@code size} replaced (the cached size over the adapter's on-device one)
     */
    public FileStat withSize(long newSize) {
        return newSize == size ? this : new FileStat(ino, type, newSize, allocatedBytes, linkCount, mode, uid, gid,
                atime, mtime, ctime, btime, atomicWrite, rdev);
    }

    /** @return whether this is a directory */
    public boolean isDirectory() {
        return type == FileType.DIRECTORY;
    }

    /** @return whether this is a symbolic link */
    public boolean isSymbolicLink() {
        return type == FileType.SYMLINK;
    }

    /** @return {@code st_mode}: the type bits of {@link FileType#modeBits()} or'ed with {@code mode} */
    public int posixMode() {
        return type.modeBits() | mode;
    }

    /** @return the modification time in milliseconds since the epoch (rounded down) */
    public long modifiedMillis() {
        return mtime.toEpochMilli();
    }
}
