package dev.iomap.testkit.snapfs;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.XattrMode;
import dev.iomap.testkit.snapfs.SnapState.Inode;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.time.Instant;

/**
 * New inodes, attribute changes and extended attributes of one snapfs mount, in its {@link SnapState}.
 * Not thread-safe: {@link SnapMount} calls it holding its monitor. Changes are in memory until the
 * next commit, which writes them with everything else (so a power cut leaves all of a change or none).
 */
final class SnapInodes {
    private final SnapState state;
    private final SnapLayout layout;

    /**
     * @param state the mount's metadata
     * @param layout the device's layout, for the size of a metadata slot
     */
    SnapInodes(SnapState state, SnapLayout layout) {
        this.state = state;
        this.layout = layout;
    }

    /**
     * @param ino an inode number
     * @return the inode
     * @throws NoSuchFileException if there is none
     */
    Inode inode(long ino) throws NoSuchFileException {
        Inode inode = state.inodes.get(ino);
        if (inode == null) {
            throw new NoSuchFileException("snapfs inode " + ino);
        }
        return inode;
    }

    /**
     * Creates an inode under a new name: its four times now, the directory's mtime and ctime now.
     * Inode numbers are never reused.
     *
     * @param dirIno the directory
     * @param name the new name
     * @param type what it is
     * @param attributes mode, owner, group (the caller has applied the adapter's rules)
     * @return the new inode
     * @throws FileAlreadyExistsException if the name exists
     * @throws NoSuchFileException if the directory does not
     */
    Inode create(long dirIno, String name, FileType type, NewInodeAttributes attributes)
            throws FileAlreadyExistsException, NoSuchFileException {
        Inode dir = inode(dirIno);
        if (dir.entries.containsKey(name)) {
            throw new FileAlreadyExistsException(name);
        }
        Inode inode = new Inode(state.nextIno++, type);
        inode.mode = attributes.mode();
        inode.uid = attributes.uid();
        inode.gid = attributes.gid();
        Instant now = Instant.now();
        inode.born(now);
        state.inodes.put(inode.ino, inode);
        dir.entries.put(name, inode.ino);
        dir.modified(now);
        return inode;
    }

    /**
     * Applies what the change holds and sets ctime now (the core calls this only for a non-empty
     * change, and has refused a symbolic link's mode).
     *
     * @param inode the inode
     * @param change what to change
     */
    void setattr(Inode inode, AttributeChange change) {
        change.mode().ifPresent(mode -> inode.mode = mode);
        change.uid().ifPresent(uid -> inode.uid = uid);
        change.gid().ifPresent(gid -> inode.gid = gid);
        change.atime().ifPresent(time -> inode.atime = time);
        change.mtime().ifPresent(time -> inode.mtime = time);
        if (change.setsCtime()) {
            inode.ctime = Instant.now();
        }
    }

    /**
     * @param inode the inode
     * @param name the attribute's name
     * @return a copy of its value
     * @throws NoSuchAttributeException if it has none of that name (ENODATA)
     */
    byte[] getxattr(Inode inode, String name) throws NoSuchAttributeException {
        byte[] value = inode.xattrs.get(name);
        if (value == null) {
            throw new NoSuchAttributeException("snapfs inode " + inode.ino, name);
        }
        return value.clone();
    }

    /**
     * Creates or replaces as {@code mode} says and sets ctime. The whole metadata must still fit a slot:
     * else nothing changes and the call fails with ENOSPC, as ext4 does when an attribute does not fit.
     *
     * @param inode the inode
     * @param name the attribute's name, checked by the core
     * @param value the value, checked by the core
     * @param mode create, replace or either
     * @throws FileAlreadyExistsException for CREATE of an existing attribute
     * @throws NoSuchAttributeException for REPLACE of a missing one
     * @throws NoSpaceException if the metadata would no longer fit a slot
     */
    void setxattr(Inode inode, String name, byte[] value, XattrMode mode)
            throws FileAlreadyExistsException, NoSuchAttributeException, NoSpaceException {
        byte[] old = inode.xattrs.get(name);
        if (old != null && mode == XattrMode.CREATE) {
            throw new FileAlreadyExistsException("snapfs inode " + inode.ino, null, "extended attribute '" + name
                    + "' exists");
        }
        if (old == null && mode == XattrMode.REPLACE) {
            throw new NoSuchAttributeException("snapfs inode " + inode.ino, name);
        }
        inode.xattrs.put(name, value.clone());
        long bytes = state.serialize().length;
        if (bytes > layout.slotPayloadCapacity()) {
            if (old == null) {
                inode.xattrs.remove(name);
            } else {
                inode.xattrs.put(name, old);
            }
            throw new NoSpaceException("snapfs: extended attribute '" + name + "' would make the metadata " + bytes
                    + " bytes, more than a slot's " + layout.slotPayloadCapacity());
        }
        inode.ctime = Instant.now();
    }

    /**
     * Removes an attribute and sets ctime.
     *
     * @param inode the inode
     * @param name the attribute's name
     * @throws NoSuchAttributeException if absent
     */
    void removexattr(Inode inode, String name) throws NoSuchAttributeException {
        if (inode.xattrs.remove(name) == null) {
            throw new NoSuchAttributeException("snapfs inode " + inode.ino, name);
        }
        inode.ctime = Instant.now();
    }
}
