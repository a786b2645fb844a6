package dev.iomap.fuse;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
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
import java.util.function.ToIntFunction;

/**
 * The inode side of {@link FuseBridge}, on paths the bridge has resolved: what {@code getattr} reports,
 * the attributes a new inode gets, and readlink, chmod/chown/utimens ({@code setattr}), the
 * extended-attribute operations and the inode flags' ioctls ({@code lsattr}, {@code chattr}), each with
 * the kernel's semantics (and errno) for the same system call on a local filesystem.
 *
 * <p>Where the file system declares {@link Capability#POSIX_ATTRIBUTES}, {@code getattr} reports the
 * stored mode, owner, group, link count and the three times with nanoseconds, and new inodes get the
 * mode the kernel asked for without the caller's umask, or limited by the directory's default ACL
 * ({@link AclOperations}: where the kernel enforces ACLs it leaves the umask to the file system), and the
 * calling process's uid and gid ({@link Caller}), or the parent's gid and set-group-ID bit where the
 * parent directory has set-group-ID, as Linux's {@code inode_init_owner}. Otherwise every file is shown
 * with the type's default mode, the mounting user as owner, its modification time as all three times
 * and a directory with one link ("unknown", so no tool counts subdirectories from it).
 *
 * <p>What the file system cannot do is answered as Linux answers it for a local filesystem without it
 * ({@link ErrnoException}): symlink without {@link Capability#SYMLINKS}, link without
 * {@link Capability#HARD_LINKS}, chmod and chown without POSIX attributes are EPERM (as
 * {@code vfs_symlink}, {@code vfs_link} and vfat); the extended-attribute operations without
 * {@link Capability#XATTRS} are ENOSYS, which the kernel turns into EOPNOTSUPP for the caller and
 * remembers, so it stops asking. Every other failure is the file system's exception, for
 * {@link ErrnoMapping}. Thread-safe.
 */
final class InodeOperations {
    /** setxattr(2) flags (linux/xattr.h). */
    static final int XATTR_CREATE = 1;
    static final int XATTR_REPLACE = 2;
    static final int S_ISUID = 04000;
    static final int S_ISGID = 02000;
    static final int S_IXGRP = 00010;
    /** {@code FS_IOC_GETFLAGS}, {@code _IOR('f', 1, long)} as a 64-bit process and FUSE number it. */
    static final int FS_IOC_GETFLAGS = 0x80086601;
    /** {@code FS_IOC_SETFLAGS}, {@code _IOW('f', 2, long)}. */
    static final int FS_IOC_SETFLAGS = 0x40086602;
    /** Bytes of the flags word the flags ioctls exchange. */
    static final int FLAGS_BYTES = Integer.BYTES;
    /** {@code FS_IOC_FSGETXATTR}, {@code _IOR('X', 31, struct fsxattr)}. */
    static final int FS_IOC_FSGETXATTR = 0x801c581f;
    /** {@code FS_IOC_FSSETXATTR}, {@code _IOW('X', 32, struct fsxattr)}. */
    static final int FS_IOC_FSSETXATTR = 0x401c5820;
    /** Bytes of {@code struct fsxattr}: five 32-bit fields and 8 bytes of padding. */
    static final int FSXATTR_BYTES = 28;
    /**
     * {@code XFS_IOC_GOINGDOWN} ({@code FS_IOC_SHUTDOWN}), {@code _IOR('X', 125, __u32)}: xfstests' godown
     * ({@link FuseBridge#shutDown}).
     */
    static final int XFS_IOC_GOINGDOWN = 0x8004587d;
    /** {@code FS_IOC_GETFSLABEL}, {@code _IOR(0x94, 49, char[FSLABEL_MAX])} ({@link FuseBridge#label}). */
    static final int FS_IOC_GETFSLABEL = 0x81009431;
    /** {@code FS_IOC_SETFSLABEL}, {@code _IOW(0x94, 50, char[FSLABEL_MAX])}. */
    static final int FS_IOC_SETFSLABEL = 0x41009432;
    /** {@code FSLABEL_MAX}: bytes of the label ioctls' buffer, the label and its NUL. */
    static final int FSLABEL_MAX = 256;
    /** {@code FITRIM}, {@code _IOWR('X', 121, struct fstrim_range)} ({@link FuseBridge#trim}). */
    static final int FITRIM = 0xc0185879;
    /** Bytes of {@code struct fstrim_range}: start, len, minlen, each a {@code __u64}. */
    static final int FSTRIM_RANGE_BYTES = 24;

    /**
     * Who made the current request ({@code fuse_req_ctx}).
     *
     * @param uid the calling process's file-system user id
     * @param gid its file-system group id
     * @param umask its umask where the request creates a node (0 otherwise, or where not known)
     */
    record Caller(int uid, int gid, int umask) {
        /**
         * A caller whose umask does not matter (the kernel applied it, or nothing is created).
         *
         * @param uid the user id
         * @param gid the group id
         */
        Caller(int uid, int gid) {
            this(uid, gid, 0);
        }
    }

    private final IomapFileSystem fs;
    private final boolean posix;
    private final Set<Capability> capabilities;
    private final Caller owner;
    private final int blockSize;
    private final AclOperations acls;

    /** @return the mounting user (the owner shown where the file system keeps no POSIX attributes) */
    Caller owner() {
        return owner;
    }

    /**
     * @param fs the file system
     * @param owner the mounting user: the owner shown without POSIX attributes
     * @param blockSize the preferred I/O size reported ({@code st_blksize})
     */
    InodeOperations(IomapFileSystem fs, Caller owner, int blockSize) {
        this.fs = fs;
        this.capabilities = Set.copyOf(fs.capabilities());
        this.posix = capabilities.contains(Capability.POSIX_ATTRIBUTES);
        this.owner = owner;
        this.blockSize = blockSize;
        this.acls = new AclOperations(fs);
    }

    /** @return the POSIX ACLs' operations */
    AclOperations acls() {
        return acls;
    }

    /** @return whether the file system keeps POSIX attributes (and the kernel may check permissions from them) */
    boolean posix() {
        return posix;
    }

    /**
     * @param capability a capability
     * @return whether the file system declares it
     */
    boolean has(Capability capability) {
        return capabilities.contains(capability);
    }

    /**
     * @param type a file type
     * @return {@code st_mode} shown without POSIX attributes: the type's bits and default mode
     */
    static int defaultMode(FileType type) {
        return type.modeBits() | NewInodeAttributes.defaultMode(type);
    }

    /**
     * @param path a resolved path
     * @return the name's own stat ({@code lstat}; {@code stat} where the file system has no {@code lstat})
     * @throws IOException as {@code lstat}
     */
    FileStat lstat(String path) throws IOException {
        try {
            return fs.lstat(path);
        } catch (NotSupportedException e) {
            return fs.stat(path);
        }
    }

    /**
     * @param file the file system's stat
     * @return what the kernel is shown ({@code btime} is not in Linux's {@code struct stat})
     */
    Attributes attributes(FileStat file) {
        if (posix) {
            return new Attributes(file.ino(), file.posixMode(), file.linkCount(), file.uid(), file.gid(),
                    file.size(), file.allocatedBytes(), blockSize, file.atime(), file.mtime(), file.ctime(),
                    file.rdev());
        }
        Instant modified = Instant.ofEpochMilli(file.modifiedMillis());
        int links = file.isDirectory() ? 1 : file.linkCount();
        return new Attributes(file.ino(), defaultMode(file.type()), links, owner.uid(), owner.gid(), file.size(),
                file.allocatedBytes(), blockSize, modified, modified, modified, file.rdev());
    }

    /**
     * The generation the kernel is given with a node id: the inode's birth time folded into 32 bits
     * where the file system keeps one ({@link Capability#POSIX_ATTRIBUTES}), so that an inode number the
     * file system reuses for a new file comes with a new generation and the kernel drops what it knew of
     * the old one (fs/fuse {@code fuse_stale_inode}); 0 otherwise (the kernel keeps 32 bits).
     *
     * @param file the inode's stat
     * @return its generation
     */
    int generation(FileStat file) {
        if (!posix) {
            return 0;
        }
        Instant born = file.btime();
        return Long.hashCode(born.getEpochSecond() * 1_000_000_000L + born.getNano()) & Integer.MAX_VALUE;
    }

    /**
     * What a new node gets: its attributes and the ACLs it inherits ({@link AclOperations#creation}).
     *
     * @param attributes its mode and owner
     * @param acls its mode as the directory's default ACL or the umask leave it, and the ACLs it inherits
     */
    record NewNode(NewInodeAttributes attributes, AclOperations.Creation acls) {
    }

    /**
     * @param parent the parent directory's path
     * @param mode the mode the kernel passed (type bits are dropped); the caller's umask or the parent's
     *     default ACL limit it ({@link AclOperations#creation})
     * @param type what is created
     * @param caller who creates it
     * @return its attributes: the caller's uid, and its gid unless the parent has set-group-ID (then the
     *     parent's gid, and a new directory inherits the bit); and its ACLs, for {@link #inherit} once it
     *     exists
     * @throws IOException if the parent cannot be stat'ed
     */
    NewNode newNode(String parent, int mode, FileType type, Caller caller) throws IOException {
        AclOperations.Creation creation = acls.creation(parent, mode & NewInodeAttributes.MODE_MASK, type,
                caller.umask());
        return new NewNode(newInode(parent, creation.mode(), type, caller), creation);
    }

    /**
     * Stores the ACLs a node created with {@link #newNode} inherits.
     *
     * @param path the new node
     * @param node what {@link #newNode} said
     * @throws IOException as the file system
     */
    void inherit(String path, NewNode node) throws IOException {
        acls.inherit(path, node.acls());
    }

    /** The owner and group of a new node, and its mode with the parent's set-group-ID applied. */
    private NewInodeAttributes newInode(String parent, int mode, FileType type, Caller caller) throws IOException {
        int bits = mode & NewInodeAttributes.MODE_MASK;
        int gid = caller.gid();
        FileStat directory = fs.lstat(parent);
        if ((directory.mode() & S_ISGID) != 0) {
            gid = directory.gid();
            if (type == FileType.DIRECTORY) {
                bits |= S_ISGID;
            }
        }
        return new NewInodeAttributes(bits, caller.uid(), gid);
    }

    /**
     * symlink(2).
     *
     * @param parent the new link's directory (resolved)
     * @param path the new link's path
     * @param target what it points at, in {@link FileNames}' form
     * @param caller its owner
     * @throws IOException EPERM without {@link Capability#SYMLINKS}, or as the file system
     */
    void symlink(String parent, String path, String target, Caller caller) throws IOException {
        if (!has(Capability.SYMLINKS)) {
            throw new ErrnoException(LinuxErrno.EPERM, "symlink " + path + ": the file system has no symbolic links");
        }
        fs.createSymbolicLink(path, target, newInode(parent, 0777, FileType.SYMLINK, caller));
    }

    /**
     * @param path a symbolic link
     * @return its target's bytes
     * @throws IOException EINVAL if it is not a symbolic link
     */
    byte[] readlink(String path) throws IOException {
        return FileNames.encode(fs.readSymbolicLink(path));
    }

    /**
     * link(2).
     *
     * @param existing the file
     * @param link the new name
     * @throws IOException EPERM without {@link Capability#HARD_LINKS}, or as the file system
     */
    void link(String existing, String link) throws IOException {
        if (!has(Capability.HARD_LINKS)) {
            throw new ErrnoException(LinuxErrno.EPERM, "link " + link + ": the file system has no hard links");
        }
        fs.createLink(link, existing);
    }

    /**
     * The attribute part of {@code setattr}: chmod, chown, utimens, each as Linux does it.
     *
     * @param path the inode
     * @param change mode, owner, group and times to set ({@link SetAttributes})
     * @throws IOException EPERM for chmod or chown without POSIX attributes; EOPNOTSUPP for an explicit
     *     time without them (only "now" is possible: the file system keeps its own modification time)
     */
    void setAttributes(String path, SetAttributes change) throws IOException {
        if (!posix) {
            if (change.mode() != null || change.uid() != null || change.gid() != null) {
                throw new ErrnoException(LinuxErrno.EPERM, "chmod or chown " + path
                        + ": the file system keeps no owner or mode");
            }
            if ((change.atime() != null && change.atime() != SetAttributes.NOW)
                    || (change.mtime() != null && change.mtime() != SetAttributes.NOW)) {
                throw new ErrnoException(LinuxErrno.EOPNOTSUPP, "utimens " + path
                        + ": the file system keeps its own modification time");
            }
            return;
        }
        AttributeChange attributes = AttributeChange.none();
        Instant now = Instant.now();
        if (change.mode() != null) {
            attributes = attributes.withMode(change.mode() & NewInodeAttributes.MODE_MASK);
        }
        if (change.uid() != null) {
            attributes = attributes.withUid(change.uid());
        }
        if (change.gid() != null) {
            attributes = attributes.withGid(change.gid());
        }
        if (change.atime() != null && change.atime() != SetAttributes.NOW) {
            attributes = attributes.withAtime(change.atime());
        }
        if (change.mtime() != null && change.mtime() != SetAttributes.NOW) {
            attributes = attributes.withMtime(change.mtime());
        }
        if (change.atime() == SetAttributes.NOW || change.mtime() == SetAttributes.NOW) {
            attributes = attributes.withTimesNow(now, change.atime() == SetAttributes.NOW,
                    change.mtime() == SetAttributes.NOW);
        }
        if (change.uid() != null || change.gid() != null) {
            killCapabilities(path);
            if (change.mode() == null) {
                attributes = killedPrivileges(path, attributes);
            }
        }
        if (!attributes.isEmpty()) {
            fs.setAttributes(path, attributes);
        }
        if (change.mode() != null) {
            acls.chmod(path, change.mode() & NewInodeAttributes.MODE_MASK);
        }
    }

    /**
     * A chown clears set-user-ID, and set-group-ID where group execute is set, of anything but a
     * directory: the file system's job with {@code FUSE_HANDLE_KILLPRIV_V2} (Linux's
     * {@code chown_common}).
     */
    private AttributeChange killedPrivileges(String path, AttributeChange change) throws IOException {
        FileStat now = lstat(path);
        int mode = privilegesKilled(now);
        return mode == now.mode() ? change : change.withMode(mode);
    }

    /**
     * @param file a file's stat
     * @return its permission bits without set-user-ID, and without set-group-ID where group execute is
     *     set (what a write, truncate or chown by an unprivileged process leaves); a directory's as they are
     */
    static int privilegesKilled(FileStat file) {
        return privilegesKilled(file, file.gid());   // a caller in the file's group: group execute decides
    }

    /**
     * @param file a file's stat
     * @param callerGid the group of the process changing it
     * @return its permission bits as Linux's {@code file_modified} leaves them for a process without
     *     {@code CAP_FSETID} (since 6.2, {@code setattr_should_drop_sgid}): no set-user-ID, and no
     *     set-group-ID where group execute is set or the process is not in the file's group (only its
     *     primary group is known here); a directory's as they are
     */
    static int privilegesKilled(FileStat file, int callerGid) {
        if (file.isDirectory()) {
            return file.mode();
        }
        int mode = file.mode() & ~S_ISUID;
        if ((mode & S_ISGID) != 0 && ((mode & S_IXGRP) != 0 || file.gid() != callerGid)) {
            mode &= ~S_ISGID;
        }
        return mode;
    }

    /**
     * Clears privileges as {@link #privilegesKilled(FileStat, int)} says ({@code fallocate} by a process
     * without {@code CAP_FSETID}).
     *
     * @param path the file
     * @param callerGid the group of the process
     * @return whether the mode changed
     * @throws IOException as the file system
     */
    boolean killPrivileges(String path, int callerGid) throws IOException {
        return setMode(path, file -> privilegesKilled(file, callerGid));
    }

    /**
     * Clears set-user-ID and set-group-ID (where group execute is set) of a file, as a write, truncate or
     * open with {@code O_TRUNC} by an unprivileged process does.
     *
     * @param path the file
     * @return whether the mode changed
     * @throws IOException as the file system
     */
    boolean killPrivileges(String path) throws IOException {
        return setMode(path, InodeOperations::privilegesKilled);
    }

    /** Sets the mode {@code newMode} gives the file's stat, if it differs; nothing where modes are not kept. */
    private boolean setMode(String path, ToIntFunction<FileStat> newMode) throws IOException {
        if (!posix) {
            return false;
        }
        FileStat file = lstat(path);
        int mode = newMode.applyAsInt(file);
        if (mode == file.mode()) {
            return false;
        }
        fs.setAttributes(path, AttributeChange.none().withMode(mode));
        return true;
    }

    /** The extended attribute of file capabilities, which a write, truncate or chown removes. */
    static final String SECURITY_CAPABILITY = "security.capability";

    /**
     * @param path a file
     * @return whether it has file capabilities ({@value #SECURITY_CAPABILITY}); false where the file system
     *     keeps no extended attributes
     * @throws IOException as the file system
     */
    boolean hasCapabilities(String path) throws IOException {
        if (!has(Capability.XATTRS)) {
            return false;
        }
        try {
            fs.getXattr(path, SECURITY_CAPABILITY);
            return true;
        } catch (dev.iomap.api.NoSuchAttributeException absent) {
            return false;
        }
    }

    /**
     * Removes a file's capabilities ({@value #SECURITY_CAPABILITY}), as Linux's {@code file_remove_privs}
     * and {@code chown_common} do whoever writes, truncates or chowns it (the file system's job with
     * {@code FUSE_HANDLE_KILLPRIV_V2}); nothing where it has none.
     *
     * @param path the file
     * @throws IOException as the file system
     */
    void killCapabilities(String path) throws IOException {
        if (!has(Capability.XATTRS)) {
            return;
        }
        try {
            fs.removeXattr(path, SECURITY_CAPABILITY);
        } catch (dev.iomap.api.NoSuchAttributeException absent) {
            // nothing to remove
        }
    }

    /**
     * getxattr(2).
     *
     * @param path the file
     * @param name the attribute
     * @return its value
     * @throws IOException ENOSYS without {@link Capability#XATTRS}; ENODATA if absent
     */
    byte[] getxattr(String path, String name) throws IOException {
        checkXattrs(path);
        return fs.getXattr(path, name);
    }

    /**
     * listxattr(2).
     *
     * @param path the file
     * @return the names, each NUL-terminated
     * @throws IOException ENOSYS without {@link Capability#XATTRS}
     */
    byte[] listxattr(String path) throws IOException {
        checkXattrs(path);
        var names = new ByteArrayOutputStream();
        for (String name : fs.listXattrs(path)) {
            names.writeBytes(FileNames.encode(name));
            names.write(0);
        }
        return names.toByteArray();
    }

    /**
     * setxattr(2): flags 0 creates or replaces, {@code XATTR_CREATE} only creates (EEXIST),
     * {@code XATTR_REPLACE} only replaces (ENODATA); both at once fail either way, as on ext4; any
     * other bit is EINVAL.
     *
     * @param path the file
     * @param name the attribute
     * @param value its new value
     * @param flags setxattr's flags
     * @param caller who sets it
     * @throws IOException ENOSYS without {@link Capability#XATTRS}, or as above; an ACL where the kernel
     *     enforces them as {@link AclOperations#set}
     */
    void setxattr(String path, String name, byte[] value, int flags, Caller caller) throws IOException {
        checkXattrs(path);
        if ((flags & ~(XATTR_CREATE | XATTR_REPLACE)) != 0) {
            throw new ErrnoException(LinuxErrno.EINVAL, "setxattr " + path + ": flags " + flags);
        }
        if (acls.enabled() && AclOperations.isAcl(name)) {
            acls.set(path, name, value, caller);
            return;
        }
        if (flags == (XATTR_CREATE | XATTR_REPLACE)) {
            fs.getXattr(path, name);
            throw new FileAlreadyExistsException(path, null, "extended attribute '" + name + "' exists");
        }
        XattrMode mode = switch (flags) {
            case XATTR_CREATE -> XattrMode.CREATE;
            case XATTR_REPLACE -> XattrMode.REPLACE;
            default -> XattrMode.ANY;
        };
        fs.setXattr(path, name, value, mode);
    }

    /**
     * removexattr(2).
     *
     * @param path the file
     * @param name the attribute
     * @throws IOException ENOSYS without {@link Capability#XATTRS}; ENODATA if absent
     */
    void removexattr(String path, String name) throws IOException {
        checkXattrs(path);
        fs.removeXattr(path, name);
    }

    private void checkXattrs(String path) throws ErrnoException {
        if (!has(Capability.XATTRS)) {
            throw new ErrnoException(LinuxErrno.ENOSYS, path + ": the file system has no extended attributes");
        }
    }

    /**
     * ioctl(2) on a file or directory: {@code FS_IOC_GETFLAGS} ({@code lsattr}) writes the inode's flags
     * ({@link FileFlag#linuxBit()}s) to {@code data}; {@code FS_IOC_SETFLAGS} ({@code chattr}) sets the
     * inode's flags to exactly those in {@code data}, EOPNOTSUPP for a bit that is no {@link FileFlag} or
     * a flag the file system does not support. The flags word is an {@code int} in native byte order.
     * {@code FS_IOC_FSGETXATTR} answers a {@code struct fsxattr} whose {@code fsx_xflags} are the
     * {@link FileFlag#xflag()}s of the inode's flags, every other field 0 (Linux asks for it before every
     * set, to check {@code CAP_LINUX_IMMUTABLE} against the flags as they were);
     * {@code FS_IOC_FSSETXATTR} ({@code xfs_io -c chattr}) sets the flags with an {@code FS_XFLAG_*}
     * counterpart to exactly those in {@code fsx_xflags} and keeps the others, EOPNOTSUPP for an xflag
     * that is no {@link FileFlag}'s, EINVAL for an extent size or project id (none is kept). Every other
     * command is ENOTTY.
     *
     * @param path the file
     * @param command the ioctl command, as the kernel passes it (64-bit numbering)
     * @param data the command's buffer, {@link #ioctlBytes} long: read for a set, written for a get
     * @throws IOException ENOTTY for another command, EINVAL for a short buffer, or as the file system
     */
    void ioctl(String path, int command, ByteBuffer data) throws IOException {
        if (command != FS_IOC_GETFLAGS && command != FS_IOC_SETFLAGS && command != FS_IOC_FSGETXATTR
                && command != FS_IOC_FSSETXATTR) {
            throw new ErrnoException(LinuxErrno.ENOTTY, "ioctl " + Integer.toHexString(command) + " on " + path);
        }
        if (data.capacity() < ioctlBytes(command)) {
            throw new ErrnoException(LinuxErrno.EINVAL, "ioctl " + Integer.toHexString(command) + ": short buffer");
        }
        ByteBuffer word = data.duplicate().order(ByteOrder.nativeOrder());
        switch (command) {
            case FS_IOC_FSGETXATTR -> {
                word.put(0, new byte[FSXATTR_BYTES]);
                word.putInt(0, xflags(fs.getFileFlags(path)));
            }
            case FS_IOC_GETFLAGS -> word.putInt(0, FileFlag.linuxBits(fs.getFileFlags(path)));
            case FS_IOC_SETFLAGS -> fs.setFileFlags(path, fromLinuxBits(path, word.getInt(0)));
            default -> fs.setFileFlags(path, fromXflags(path, word, fs.getFileFlags(path)));
        }
    }

    private static int xflags(Set<FileFlag> flags) {
        int bits = 0;
        for (FileFlag flag : flags) {
            bits |= flag.xflag();
        }
        return bits;
    }

    private static Set<FileFlag> fromLinuxBits(String path, int bits) throws ErrnoException {
        Set<FileFlag> flags = FileFlag.fromLinuxBits(bits);
        int unknown = bits & ~FileFlag.linuxBits(flags);
        if (unknown != 0) {
            throw new ErrnoException(LinuxErrno.EOPNOTSUPP, "chattr " + path + ": flag bits "
                    + Integer.toHexString(unknown) + " have no counterpart here");
        }
        return flags;
    }

    /**
     * @param fsxattr the {@code struct fsxattr} the caller passed: xflags, extent size, extent count,
     *     project id, CoW extent size
     * @param now the inode's flags as they are
     */
    private static Set<FileFlag> fromXflags(String path, ByteBuffer fsxattr, Set<FileFlag> now)
            throws ErrnoException {
        int xflags = fsxattr.getInt(0);
        if (fsxattr.getInt(4) != 0 || fsxattr.getInt(12) != 0 || fsxattr.getInt(16) != 0) {
            throw new ErrnoException(LinuxErrno.EINVAL, "xfs_io chattr " + path
                    + ": no extent size hint or project id is kept here");
        }
        Set<FileFlag> flags = EnumSet.noneOf(FileFlag.class);
        for (FileFlag flag : FileFlag.values()) {
            if (flag.xflag() == 0 ? now.contains(flag) : (xflags & flag.xflag()) != 0) {
                flags.add(flag);
                xflags &= ~flag.xflag();
            }
        }
        if (xflags != 0) {
            throw new ErrnoException(LinuxErrno.EOPNOTSUPP, "xfs_io chattr " + path + ": xflags "
                    + Integer.toHexString(xflags) + " have no counterpart here");
        }
        return flags;
    }

    /**
     * @param command an ioctl command
     * @return the bytes of its buffer that {@link #ioctl} reads or writes: {@value #FLAGS_BYTES} for the
     *     flags commands (the kernel's fileattr path passes {@code sizeof(unsigned int)}, whatever the
     *     command's encoded size says), {@value #FSXATTR_BYTES} for {@code FS_IOC_FSGETXATTR},
     *     {@value #FSLABEL_MAX} for the label commands, {@value #FSTRIM_RANGE_BYTES} for {@code FITRIM},
     *     else 0
     */
    static int ioctlBytes(int command) {
        return switch (command) {
            case FS_IOC_GETFLAGS, FS_IOC_SETFLAGS -> FLAGS_BYTES;
            case FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR -> FSXATTR_BYTES;
            case FS_IOC_GETFSLABEL, FS_IOC_SETFSLABEL -> FSLABEL_MAX;
            case FITRIM -> FSTRIM_RANGE_BYTES;
            default -> 0;
        };
    }

    /**
     * @param command an ioctl command
     * @return whether {@link #ioctl} writes its buffer (the get commands) rather than reads it
     */
    static boolean ioctlAnswers(int command) {
        return command == FS_IOC_GETFLAGS || command == FS_IOC_FSGETXATTR || command == FS_IOC_GETFSLABEL
                || command == FITRIM;
    }

    /**
     * @param command an ioctl command
     * @return whether {@link #ioctl} reads its buffer's input: the set commands, and {@code FITRIM}, which
     *     reads its range and answers the bytes trimmed in it
     */
    static boolean ioctlReads(int command) {
        return !ioctlAnswers(command) || command == FITRIM;
    }
}
