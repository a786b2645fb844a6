package dev.iomap.fuse;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.XattrMode;
import dev.iomap.api.Xattrs;
import java.io.IOException;

/**
 * POSIX ACLs through FUSE ({@code FUSE_CAP_POSIX_ACL}): the kernel checks permissions from the ACLs
 * (and caches them), while the file system stores them and keeps them consistent with the mode, which
 * is what a local filesystem's {@code set_acl}, {@code posix_acl_chmod} and {@code posix_acl_create}
 * do in Linux:
 *
 * <ul>
 *   <li>the ACLs are the extended attributes {@value Xattrs#POSIX_ACL_ACCESS} and
 *       {@value Xattrs#POSIX_ACL_DEFAULT} ({@link PosixAcl}'s format), validated when set (EINVAL);
 *   <li>setting an access ACL sets the mode's permission bits from it, and one that the mode says in
 *       full (no named entries, no mask) is kept as the mode alone; a caller other than root whose
 *       group is not the file's loses set-group-ID, as {@code posix_acl_update_mode} (the caller's
 *       supplementary groups are not known here: libfuse does not pass them);
 *   <li>chmod rewrites the access ACL's owner, mask (group-owner without a mask) and other entries;
 *   <li>a node created in a directory with a default ACL gets that ACL with the creation's mode applied
 *       as its access ACL (directories also inherit the default ACL), and no umask; elsewhere the
 *       caller's umask applies (with {@code FUSE_CAP_POSIX_ACL} the kernel leaves it to the file
 *       system, which asks for {@code FUSE_CAP_DONT_MASK} so that the kernel does not apply it first).
 * </ul>
 *
 * <p>Only where the file system keeps POSIX attributes and extended attributes ({@link #supported}), and
 * only once the kernel granted ACLs at INIT ({@link #enable}); until then ACLs are plain attributes.
 * A creation and the ACL it inherits are two updates of the file system: a crash between them leaves the
 * node with the inherited mode (no wider than the ACL) and no ACL. Thread-safe.
 */
final class AclOperations {
    private static final int PERMISSIONS = 0777;

    private final IomapFileSystem fs;
    private final boolean supported;
    private volatile boolean enabled;

    /**
     * What a new node gets from its directory.
     *
     * @param mode its mode: the creation's, limited by the default ACL or by the umask
     * @param accessAcl the access ACL it inherits, or null (the mode says it all)
     * @param defaultAcl the default ACL it inherits (directories), or null
     */
    record Creation(int mode, PosixAcl accessAcl, PosixAcl defaultAcl) {
    }

    /**
     * @param fs the file system
     */
    AclOperations(IomapFileSystem fs) {
        this.fs = fs;
        var capabilities = fs.capabilities();
        this.supported = capabilities.contains(Capability.POSIX_ATTRIBUTES) && capabilities.contains(Capability.XATTRS);
    }

    /** @return whether the file system can keep ACLs: it has POSIX attributes and extended attributes */
    boolean supported() {
        return supported;
    }

    /**
     * @param granted whether the kernel enforces ACLs on this mount ({@code FUSE_CAP_POSIX_ACL} granted at
     *     INIT); ignored where the file system cannot keep them
     */
    void enable(boolean granted) {
        enabled = granted && supported;
    }

    /** @return whether ACLs are enforced on this mount: the operations below keep them consistent */
    boolean enabled() {
        return enabled;
    }

    /**
     * @param name an extended attribute's name
     * @return whether it is one of the two ACLs
     */
    static boolean isAcl(String name) {
        return Xattrs.POSIX_ACL_NAMES.contains(name);
    }

    /**
     * setxattr(2) of an ACL: validated, then stored as described above ({@code XATTR_CREATE} and
     * {@code XATTR_REPLACE} do not apply to ACLs, as in Linux). A value that is a header alone removes
     * the ACL.
     *
     * @param path the file or directory
     * @param name {@value Xattrs#POSIX_ACL_ACCESS} or {@value Xattrs#POSIX_ACL_DEFAULT}
     * @param value the ACL
     * @param caller who sets it
     * @throws IOException EINVAL for a malformed ACL, EACCES for a default ACL on anything but a directory,
     *     or as the file system
     */
    void set(String path, String name, byte[] value, InodeOperations.Caller caller) throws IOException {
        PosixAcl acl = PosixAcl.parse(value);
        FileStat file = fs.lstat(path);
        if (name.equals(Xattrs.POSIX_ACL_DEFAULT)) {
            if (!file.isDirectory()) {
                throw new ErrnoException(LinuxErrno.EACCES, "a default ACL on " + path + ", which is no directory");
            }
            store(path, name, acl.isEmpty() ? null : value);
            return;
        }
        if (acl.isEmpty()) {
            store(path, name, null);
            return;
        }
        int mode = acl.equivalentMode(file.mode());
        if (caller.uid() != 0 && caller.gid() != file.gid()) {
            mode &= ~InodeOperations.S_ISGID;
        }
        store(path, name, acl.isEquivalentToMode() ? null : value);
        if (mode != file.mode()) {
            fs.setAttributes(path, AttributeChange.none().withMode(mode));
        }
    }

    /** Stores an ACL's value, or removes it where {@code value} is null (nothing if there is none). */
    private void store(String path, String name, byte[] value) throws IOException {
        if (value != null) {
            fs.setXattr(path, name, value, XattrMode.ANY);
            return;
        }
        try {
            fs.removeXattr(path, name);
        } catch (NoSuchAttributeException absent) {
            // the mode alone already says it
        }
    }

    /**
     * After chmod: the access ACL follows the new mode ({@code posix_acl_chmod}); nothing without one.
     *
     * @param path the file or directory
     * @param mode its new mode
     * @throws IOException as the file system
     */
    void chmod(String path, int mode) throws IOException {
        if (!enabled) {
            return;
        }
        PosixAcl acl = stored(path, Xattrs.POSIX_ACL_ACCESS);
        if (acl != null) {
            fs.setXattr(path, Xattrs.POSIX_ACL_ACCESS, acl.chmod(mode).encode(), XattrMode.ANY);
        }
    }

    /**
     * What a node created in {@code parent} gets ({@code posix_acl_create}): with a default ACL there,
     * the ACL masked by {@code mode} and no umask; otherwise {@code mode} without the umask's bits.
     * Symbolic links get neither (their mode is 0777).
     *
     * @param parent the directory
     * @param mode the permission bits the creation asked for
     * @param type what is created
     * @param umask the creating process's umask (ignored where ACLs are not enforced: the kernel applied it)
     * @return the new node's mode and ACLs
     * @throws IOException if the parent's default ACL cannot be read
     */
    Creation creation(String parent, int mode, FileType type, int umask) throws IOException {
        if (type == FileType.SYMLINK) {
            return new Creation(mode, null, null);
        }
        PosixAcl inherited = enabled ? stored(parent, Xattrs.POSIX_ACL_DEFAULT) : null;
        if (inherited == null) {
            return new Creation(mode & ~(umask & PERMISSIONS), null, null);
        }
        PosixAcl.Inherited masked = inherited.create(mode);
        return new Creation(masked.mode(), masked.accessAcl(), type == FileType.DIRECTORY ? inherited : null);
    }

    /**
     * Stores the ACLs a new node inherited ({@link #creation}).
     *
     * @param path the new node
     * @param creation what {@link #creation} said
     * @throws IOException as the file system
     */
    void inherit(String path, Creation creation) throws IOException {
        if (creation.accessAcl() != null) {
            fs.setXattr(path, Xattrs.POSIX_ACL_ACCESS, creation.accessAcl().encode(), XattrMode.ANY);
        }
        if (creation.defaultAcl() != null) {
            fs.setXattr(path, Xattrs.POSIX_ACL_DEFAULT, creation.defaultAcl().encode(), XattrMode.ANY);
        }
    }

    /** @return the ACL stored under {@code name}, or null where there is none */
    private PosixAcl stored(String path, String name) throws IOException {
        try {
            return PosixAcl.parse(fs.getXattr(path, name));
        } catch (NoSuchAttributeException absent) {
            return null;
        }
    }
}
