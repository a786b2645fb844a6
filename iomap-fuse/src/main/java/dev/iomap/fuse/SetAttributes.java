package dev.iomap.fuse;

import java.time.Instant;

/**
 * What a {@code setattr} request asks to change; null leaves a field as it is.
 *
 * @param mode new permission bits (chmod), or null
 * @param uid new owner (chown), or null
 * @param gid new group, or null
 * @param size new size (truncate), or null
 * @param atime new access time, {@link #NOW} for the current time, or null
 * @param mtime new modification time, {@link #NOW}, or null
 * @param killPrivileges whether the kernel asks the file system to clear set-user-ID and set-group-ID
 *     with the truncate ({@code FATTR_KILL_SUIDGID}: the caller lacks {@code CAP_FSETID})
 */
record SetAttributes(Integer mode, Integer uid, Integer gid, Long size, Instant atime, Instant mtime,
        boolean killPrivileges) {
    /** Stands for "the current time" ({@code UTIME_NOW}); compared by identity. */
    static final Instant NOW = Instant.ofEpochSecond(Long.MIN_VALUE / 1_000_000_000L);

    /** libfuse's {@code FUSE_SET_ATTR_*} bits of {@code to_set} (fuse_lowlevel.h). */
    static final int SET_MODE = 1;
    static final int SET_UID = 1 << 1;
    static final int SET_GID = 1 << 2;
    static final int SET_SIZE = 1 << 3;
    static final int SET_ATIME = 1 << 4;
    static final int SET_MTIME = 1 << 5;
    static final int SET_ATIME_NOW = 1 << 7;
    static final int SET_MTIME_NOW = 1 << 8;
    /** {@code FUSE_SET_ATTR_KILL_SUID}: the bit of the kernel's {@code FATTR_KILL_SUIDGID}, passed through. */
    static final int SET_KILL_SUIDGID = 1 << 11;

    /** @return whether anything but the size is asked for */
    boolean changesAttributes() {
        return mode != null || uid != null || gid != null || atime != null || mtime != null;
    }
}
