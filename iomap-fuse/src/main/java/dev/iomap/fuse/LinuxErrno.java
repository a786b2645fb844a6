package dev.iomap.fuse;

/**
 * The Linux errno values the bridge returns (asm-generic/errno-base.h and errno.h; the same on amd64 and
 * aarch64, the architectures the binding knows).
 */
public final class LinuxErrno {
    /** Operation not permitted. */
    public static final int EPERM = 1;
    /** Inappropriate ioctl for device: an ioctl command the file does not know. */
    public static final int ENOTTY = 25;
    /** No such file or directory. */
    public static final int ENOENT = 2;
    /** Input/output error. */
    public static final int EIO = 5;
    /** Argument list too long: an extended attribute's value over 64 KiB. */
    public static final int E2BIG = 7;
    /** Bad file descriptor (an unknown file handle). */
    public static final int EBADF = 9;
    /** Bad address: the caller's buffer faulted. */
    public static final int EFAULT = 14;
    /** Cannot allocate memory. */
    public static final int ENOMEM = 12;
    /** Permission denied. */
    public static final int EACCES = 13;
    /** Device or resource busy. */
    public static final int EBUSY = 16;
    /** File exists. */
    public static final int EEXIST = 17;
    /** Not a directory. */
    public static final int ENOTDIR = 20;
    /** Is a directory. */
    public static final int EISDIR = 21;
    /** Invalid argument. */
    public static final int EINVAL = 22;
    /** No such device or address: lseek SEEK_DATA/SEEK_HOLE at or past the end of the file. */
    public static final int ENXIO = 6;
    /** File too large. */
    public static final int EFBIG = 27;
    /** Numerical result out of range: a buffer too small for the answer, or an extended attribute name too long. */
    public static final int ERANGE = 34;
    /** No space left on device. */
    public static final int ENOSPC = 28;
    /** Read-only file system. */
    public static final int EROFS = 30;
    /** File name too long. */
    public static final int ENAMETOOLONG = 36;
    /** Function not implemented. */
    public static final int ENOSYS = 38;
    /** Too many levels of symbolic links. */
    public static final int ELOOP = 40;
    /** No data available: no extended attribute of that name (ENOATTR). */
    public static final int ENODATA = 61;
    /** Directory not empty. */
    public static final int ENOTEMPTY = 39;
    /** Invalid or incomplete multibyte or wide character: a name that stands for no byte string. */
    public static final int EILSEQ = 84;
    /** Operation not supported (ENOTSUP is the same number on Linux). */
    public static final int EOPNOTSUPP = 95;
    /** Stale file handle: a node id whose name now names another inode (the kernel looks the path up again). */
    public static final int ESTALE = 116;
    /** Structure needs cleaning: XFS's and ext4's EFSCORRUPTED. */
    public static final int EUCLEAN = 117;

    private LinuxErrno() {
    }

    /**
     * @param errno a positive errno value
     * @return its symbolic name, for messages and test reports
     */
    public static String name(int errno) {
        return switch (errno) {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EIO -> "EIO";
            case E2BIG -> "E2BIG";
            case EBADF -> "EBADF";
            case EFAULT -> "EFAULT";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EBUSY -> "EBUSY";
            case EEXIST -> "EEXIST";
            case ENOTDIR -> "ENOTDIR";
            case EISDIR -> "EISDIR";
            case EINVAL -> "EINVAL";
            case ENXIO -> "ENXIO";
            case EFBIG -> "EFBIG";
            case ERANGE -> "ERANGE";
            case ENOSPC -> "ENOSPC";
            case EROFS -> "EROFS";
            case ENAMETOOLONG -> "ENAMETOOLONG";
            case ENOSYS -> "ENOSYS";
            case ELOOP -> "ELOOP";
            case ENODATA -> "ENODATA";
            case ENOTEMPTY -> "ENOTEMPTY";
            case EILSEQ -> "EILSEQ";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            case ENOTTY -> "ENOTTY";
            case EUCLEAN -> "EUCLEAN";
            case ESTALE -> "ESTALE";
            default -> "errno " + errno;
        };
    }
}
