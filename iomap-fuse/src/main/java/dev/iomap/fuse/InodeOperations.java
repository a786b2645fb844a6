package dev.iomap.fuse;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.XattrMode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.FileAlreadyExistsException;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.cryptomator.jfuse.api.FileInfo;
import org.cryptomator.jfuse.api.Stat;
import org.cryptomator.jfuse.api.TimeSpec;

/**
 * The inode side of {@link FuseBridge}: what {@code getattr} reports, the attributes a new inode gets,
 * and symlink, readlink, link, chmod, chown, utimens, the extended-attribute operations and the inode
 * flags' ioctls ({@code lsattr}, {@code chattr}), each with
 * the kernel's semantics (and errno) for the same system call on a local filesystem.
 *
 * <p>Where the file system declares {@link Capability#POSIX_ATTRIBUTES}, {@code getattr} reports the
 * stored mode, owner, group, link count and the three times with nanoseconds, and new inodes get the
 * mode the kernel asked for (the caller's umask is already applied: the kernel does it) and the
 * calling process's uid and gid ({@link Caller}), or the parent's gid and set-group-ID bit where the
 * parent directory has set-group-ID, as Linux's {@code inode_init_owner}. Otherwise every file is shown
 * with the type's default mode, the mounting user as owner, its modification time as all three times
 * and a directory with one link ("unknown", so no tool counts subdirectories from it).
 *
 * <p>What the file system cannot do is answered as Linux answers it for a local filesystem without it:
 * symlink without {@link Capability#SYMLINKS}, link without {@link Capability#HARD_LINKS}, chmod and
 * chown without POSIX attributes are EPERM (as {@code vfs_symlink}, {@code vfs_link} and vfat); the
 * extended-attribute operations without {@link Capability#XATTRS} are ENOSYS, which the kernel turns
 * into EOPNOTSUPP for the caller and remembers, so it stops asking (no upcall per {@code ls -l} or per
 * write's {@code security.capability} check).
 *
 * <p>Every method returns 0 (or a byte count) or a negated errno; none throws. Thread-safe.
 */
final class InodeOperations {
    /** setxattr(2) flags (linux/xattr.h). */
    static final int XATTR_CREATE = 1;
    static final int XATTR_REPLACE = 2;
    private static final int S_ISGID = 02000;
    /** {@code FS_IOC_GETFLAGS}, {@code _IOR('f', 1, long)} as a 64-bit process and FUSE number it. */
    static final int FS_IOC_GETFLAGS = 0x80086601;
    /** {@code FS_IOC_SETFLAGS}, {@code _IOW('f', 2, long)}. */
    static final int FS_IOC_SETFLAGS = 0x40086602;
    /** Bytes of the flags word the flags ioctls exchange. */
    static final int FLAGS_BYTES = Integer.BYTES;
    /** {@code FS_IOC_FSGETXATTR}, {@code _IOR('X', 31, struct fsxattr)}. */
    static final int FS_IOC_FSGETXATTR = 0x801c581f;
    /** Bytes of {@code struct fsxattr}: five 32-bit fields and 8 bytes of padding. */
    static final int FSXATTR_BYTES = 28;

    /**
     * Who made the current request.
     *
     * @param uid the calling process's file-system user id
     * @param gid its file-system group id
     */
    record Caller(int uid, int gid) {
    }

    private final IomapFileSystem fs;
    private final boolean posix;
    private final Set<Capability> capabilities;
    private final UnaryOperator<String> names;
    private final FileHandles handles;
    private final Caller owner;
    private volatile Supplier<Caller> callers;

    /**
     * @param fs the file system
     * @param names checks a path's names and returns it ({@link FuseBridge}'s rules)
     * @param handles the open files
     * @param owner the mounting user: the owner shown without POSIX attributes, and the caller until
     *     {@link #useCallers} says otherwise
     */
    InodeOperations(IomapFileSystem fs, UnaryOperator<String> names, FileHandles handles, Caller owner) {
        this.fs = fs;
        this.capabilities = Set.copyOf(fs.capabilities());
        this.posix = capabilities.contains(Capability.POSIX_ATTRIBUTES);
        this.names = names;
        this.handles = handles;
        this.owner = owner;
        this.callers = () -> owner;
    }

    /** @param source who made the current request (libfuse's {@code fuse_get_context}); null answers mean the owner */
    void useCallers(Supplier<Caller> source) {
        this.callers = source;
    }

    /** @return whether the file system keeps POSIX attributes (and the kernel may check permissions from them) */
    boolean posix() {
        return posix;
    }

    /** @return who made the current request: {@link #useCallers}' answer, or the mounting user */
    Caller caller() {
        Caller caller = callers.get();
        return caller == null ? owner : caller;
    }

    /**
     * @param type a file type
     * @return {@code st_mode} shown without POSIX attributes: the type's bits and default mode
     */
    static int defaultMode(FileType type) {
        return type.modeBits() | NewInodeAttributes.defaultMode(type);
    }

    /**
     * @param path a path whose names are checked
     * @param fi the open file, or null
     * @return the open file's stat, else the name's own ({@code lstat}; {@code stat} where the file
     *     system has no {@code lstat})
     * @throws IOException as {@code lstat}
     */
    FileStat lstat(String path, FileInfo fi) throws IOException {
        IomapFile open = fi == null ? null : handles.find(fi.getFh());
        if (open != null) {
            return open.stat();
        }
        String checked = names.apply(path);
        try {
            return fs.lstat(checked);
        } catch (NotSupportedException e) {
            return fs.stat(checked);
        }
    }

    /** Fills jfuse's {@code struct stat} from the file system's stat (btime is not in Linux's {@code struct stat}). */
    void fill(Stat stat, FileStat file) {
        StatBlocks.setIno(stat, file.ino());
        stat.setSize(file.size());
        StatBlocks.set(stat, file.allocatedBytes());
        if (posix) {
            stat.setMode(file.posixMode());
            stat.setNLink((short) Math.min(file.linkCount(), Short.MAX_VALUE));
            stat.setUid(file.uid());
            stat.setGid(file.gid());
            stat.aTime().set(file.atime());
            stat.mTime().set(file.mtime());
            stat.cTime().set(file.ctime());
            return;
        }
        stat.setMode(defaultMode(file.type()));
        stat.setNLink((short) (file.isDirectory() ? 1 : Math.min(file.linkCount(), Short.MAX_VALUE)));
        stat.setUid(owner.uid());
        stat.setGid(owner.gid());
        Instant modified = Instant.ofEpochMilli(file.modifiedMillis());
        stat.mTime().set(modified);
        stat.cTime().set(modified);
        stat.aTime().set(modified);
    }

    /**
     * @param path the new inode's path (names checked)
     * @param mode the mode the kernel passed (umask applied; type bits are dropped)
     * @param type what is created
     * @return its attributes: the caller's uid, and its gid unless the parent has set-group-ID (then the
     *     parent's gid, and a new directory inherits the bit)
     * @throws IOException if the parent cannot be stat'ed
     */
    NewInodeAttributes newInode(String path, int mode, FileType type) throws IOException {
        Caller caller = caller();
        int bits = mode & NewInodeAttributes.MODE_MASK;
        int gid = caller.gid();
        int slash = path.lastIndexOf('/');
        FileStat parent = fs.lstat(slash <= 0 ? "/" : path.substring(0, slash));
        if ((parent.mode() & S_ISGID) != 0) {
            gid = parent.gid();
            if (type == FileType.DIRECTORY) {
                bits |= S_ISGID;
            }
        }
        return new NewInodeAttributes(bits, caller.uid(), gid);
    }

    /** symlink(2): {@code link} pointing at {@code target}, owned by the caller. */
    int symlink(String target, String link) {
        return Calls.call("symlink", link, () -> {
            if (!capabilities.contains(Capability.SYMLINKS)) {
                return -LinuxErrno.EPERM;
            }
            String path = names.apply(link);
            fs.createSymbolicLink(path, target, newInode(path, 0777, FileType.SYMLINK));
            return 0;
        });
    }

    /**
     * readlink as libfuse expects it: the target's bytes, NUL-terminated, cut to fit {@code size}
     * bytes (the NUL included); 0 on success.
     *
     * @param path the link
     * @param buf where the target goes (its remaining bytes are the room, at most {@code size})
     * @param size the room libfuse gave, NUL included
     * @return 0 or a negated errno (EINVAL if {@code path} is not a symbolic link)
     */
    int readlink(String path, ByteBuffer buf, long size) {
        return Calls.call("readlink", path, () -> {
            byte[] target = FileNames.encode(fs.readSymbolicLink(names.apply(path)));
            int room = (int) Math.min(Math.min(size, buf.remaining()), Integer.MAX_VALUE);
            if (room <= 0) {
                return -LinuxErrno.EINVAL;
            }
            int n = Math.min(target.length, room - 1);
            buf.put(target, 0, n).put((byte) 0);
            return 0;
        });
    }

    /** link(2): {@code link} as another name of {@code existing}. */
    int link(String existing, String link) {
        return Calls.call("link", link, () -> {
            if (!capabilities.contains(Capability.HARD_LINKS)) {
                return -LinuxErrno.EPERM;
            }
            fs.createLink(names.apply(link), names.apply(existing));
            return 0;
        });
    }

    /** chmod(2): the permission bits of {@code mode} (type bits dropped). */
    int chmod(String path, int mode) {
        return Calls.call("chmod", path, () -> {
            if (!posix) {
                return -LinuxErrno.EPERM;
            }
            fs.setAttributes(names.apply(path), AttributeChange.none().withMode(mode & NewInodeAttributes.MODE_MASK));
            return 0;
        });
    }

    /** chown(2): -1 (all ones, {@code (uid_t) -1}) leaves the owner or group as it is. */
    int chown(String path, int uid, int gid) {
        return Calls.call("chown", path, () -> {
            if (!posix) {
                return -LinuxErrno.EPERM;
            }
            AttributeChange change = AttributeChange.none();
            if (uid != -1) {
                change = change.withUid(uid);
            }
            if (gid != -1) {
                change = change.withGid(gid);
            }
            if (!change.isEmpty()) {
                fs.setAttributes(names.apply(path), change);
            }
            return 0;
        });
    }

    /**
     * utimensat(2): each time is "now" ({@code UTIME_NOW}, or both for a null array), left as it is
     * ({@code UTIME_OMIT}) or explicit with nanoseconds. Without POSIX attributes only "now" and
     * "leave" are accepted (the file system keeps its own modification time; explicit times get
     * EOPNOTSUPP).
     */
    int utimens(String path, TimeSpec atime, TimeSpec mtime, FileInfo fi) {
        return Calls.call("utimens", path, () -> {
            if (!posix) {
                if (!nowOrOmit(atime) || !nowOrOmit(mtime)) {
                    return -LinuxErrno.EOPNOTSUPP;
                }
                lstat(path, fi);
                return 0;
            }
            Instant now = Instant.now();
            AttributeChange change = AttributeChange.none();
            if (atime == null || !atime.isUtimeOmit()) {
                change = change.withAtime(atime == null || atime.isUtimeNow() ? now : atime.get());
            }
            if (mtime == null || !mtime.isUtimeOmit()) {
                change = change.withMtime(mtime == null || mtime.isUtimeNow() ? now : mtime.get());
            }
            if (!change.isEmpty()) {
                fs.setAttributes(names.apply(path), change);
            }
            return 0;
        });
    }

    private static boolean nowOrOmit(TimeSpec time) {
        return time == null || time.isUtimeNow() || time.isUtimeOmit();
    }

    /**
     * getxattr(2): with no room ({@code value} has nothing remaining) the value's size; else the value
     * and its size, or ERANGE if it does not fit; ENODATA if absent.
     */
    int getxattr(String path, String name, ByteBuffer value) {
        return Calls.call("getxattr", path, () -> {
            if (!capabilities.contains(Capability.XATTRS)) {
                return -LinuxErrno.ENOSYS;
            }
            byte[] bytes = fs.getXattr(names.apply(path), name);
            return fit(bytes, value);
        });
    }

    /** listxattr(2): the names, each NUL-terminated; size probing and ERANGE as {@link #getxattr}. */
    int listxattr(String path, ByteBuffer list) {
        return Calls.call("listxattr", path, () -> {
            if (!capabilities.contains(Capability.XATTRS)) {
                return -LinuxErrno.ENOSYS;
            }
            var names0 = new ByteArrayOutputStream();
            for (String name : fs.listXattrs(names.apply(path))) {
                names0.writeBytes(FileNames.encode(name));
                names0.write(0);
            }
            return fit(names0.toByteArray(), list);
        });
    }

    /**
     * ioctl(2) on a file or directory: {@code FS_IOC_GETFLAGS} ({@code lsattr}) writes the inode's flags
     * ({@link FileFlag#linuxBit()}s) to {@code data}; {@code FS_IOC_SETFLAGS} ({@code chattr}) sets the
     * inode's flags to exactly those in {@code data}, EOPNOTSUPP for a bit that is no {@link FileFlag} or
     * a flag the file system does not support. The flags word is an {@code int} in native byte order.
     * {@code FS_IOC_FSGETXATTR} answers a {@code struct fsxattr} of zeros: no {@link FileFlag} has an
     * {@code FS_XFLAG_*} counterpart (Linux asks for it before every {@code FS_IOC_SETFLAGS}, and fails
     * the set if it fails). Every other command is ENOTTY.
     *
     * @param path the file
     * @param command the ioctl command, as the kernel passes it (64-bit numbering)
     * @param data the command's buffer in libfuse's memory, {@link #ioctlBytes} long
     * @return 0 or a negated errno
     */
    int ioctl(String path, int command, ByteBuffer data) {
        if (command != FS_IOC_GETFLAGS && command != FS_IOC_SETFLAGS && command != FS_IOC_FSGETXATTR) {
            return -LinuxErrno.ENOTTY;
        }
        return Calls.call("ioctl", path, () -> {
            if (data.capacity() < ioctlBytes(command)) {
                return -LinuxErrno.EINVAL;
            }
            ByteBuffer word = data.duplicate().order(ByteOrder.nativeOrder());
            String name = names.apply(path);
            if (command == FS_IOC_FSGETXATTR) {
                fs.getFileFlags(name);
                word.put(new byte[FSXATTR_BYTES]);
                return 0;
            }
            if (command == FS_IOC_GETFLAGS) {
                int bits = 0;
                for (FileFlag flag : fs.getFileFlags(name)) {
                    bits |= flag.linuxBit();
                }
                word.putInt(0, bits);
                return 0;
            }
            int bits = word.getInt(0);
            Set<FileFlag> flags = EnumSet.noneOf(FileFlag.class);
            for (FileFlag flag : FileFlag.values()) {
                if ((bits & flag.linuxBit()) != 0) {
                    flags.add(flag);
                    bits &= ~flag.linuxBit();
                }
            }
            if (bits != 0) {
                return -LinuxErrno.EOPNOTSUPP;
            }
            fs.setFileFlags(name, flags);
            return 0;
        });
    }

    /**
     * @param command an ioctl command
     * @return the bytes of its buffer that {@link #ioctl} reads or writes: {@value #FLAGS_BYTES} for the
     *     flags commands (the kernel's fileattr path passes {@code sizeof(unsigned int)}, whatever the
     *     command's encoded size says), {@value #FSXATTR_BYTES} for {@code FS_IOC_FSGETXATTR}, else 0
     */
    static int ioctlBytes(int command) {
        return switch (command) {
            case FS_IOC_GETFLAGS, FS_IOC_SETFLAGS -> FLAGS_BYTES;
            case FS_IOC_FSGETXATTR -> FSXATTR_BYTES;
            default -> 0;
        };
    }

    private static int fit(byte[] bytes, ByteBuffer room) {
        if (!room.hasRemaining()) {
            return bytes.length;
        }
        if (bytes.length > room.remaining()) {
            return -LinuxErrno.ERANGE;
        }
        room.put(bytes);
        return bytes.length;
    }

    /**
     * setxattr(2): flags 0 creates or replaces, {@code XATTR_CREATE} only creates (EEXIST),
     * {@code XATTR_REPLACE} only replaces (ENODATA); both at once fail either way, as on ext4; any
     * other bit is EINVAL.
     */
    int setxattr(String path, String name, ByteBuffer value, int flags) {
        return Calls.call("setxattr", path, () -> {
            if (!capabilities.contains(Capability.XATTRS)) {
                return -LinuxErrno.ENOSYS;
            }
            if ((flags & ~(XATTR_CREATE | XATTR_REPLACE)) != 0) {
                return -LinuxErrno.EINVAL;
            }
            String checked = names.apply(path);
            byte[] bytes = new byte[value.remaining()];
            value.get(bytes);
            if (flags == (XATTR_CREATE | XATTR_REPLACE)) {
                fs.getXattr(checked, name);
                throw new FileAlreadyExistsException(checked, null, "extended attribute '" + name + "' exists");
            }
            XattrMode mode = switch (flags) {
                case XATTR_CREATE -> XattrMode.CREATE;
                case XATTR_REPLACE -> XattrMode.REPLACE;
                default -> XattrMode.ANY;
            };
            fs.setXattr(checked, name, bytes, mode);
            return 0;
        });
    }

    /** removexattr(2): ENODATA if absent. */
    int removexattr(String path, String name) {
        return Calls.call("removexattr", path, () -> {
            if (!capabilities.contains(Capability.XATTRS)) {
                return -LinuxErrno.ENOSYS;
            }
            fs.removeXattr(names.apply(path), name);
            return 0;
        });
    }
}
