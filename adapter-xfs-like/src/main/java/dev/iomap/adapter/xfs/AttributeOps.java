package dev.iomap.adapter.xfs;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.FileType;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.XattrMode;
import dev.iomap.spi.InodeInfo;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.List;

/**
 * Attributes of inodes: stat, {@code chmod}/{@code chown}/{@code utimensat}, write times, symbolic-link
 * targets and extended attributes. Every method but {@link #updateTimes} runs under the metadata lock
 * (the caller's).
 *
 * <p>Extended attributes live in memory in {@link InodeState#xattrs} and on the device, encoded
 * ({@link XattrSet}), in a chain of {@code XATR} blocks that each change rewrites whole in one journal
 * transaction: after a power cut the old set or the new one is there. An inode holds at most
 * {@value Layout#MAX_XATTR_SET_BYTES} encoded bytes of them (two values of 64 KiB with their names).
 */
final class AttributeOps {
    private final Volume volume;

    AttributeOps(Volume volume) {
        this.volume = volume;
    }

    InodeInfo getattr(long ino) throws IOException {
        InodeState inode = volume.inode(ino);
        inode.lock.lock();
        try {
            long blocks = inode.data.mappedBlocks() + inode.cow.mappedBlocks() + inode.attachedBlocks();
            return new InodeInfo(ino, inode.type, inode.diskSize, blocks * volume.geometry.blockSize(), inode.nlink,
                    inode.mode, inode.uid, inode.gid, inode.atime, inode.mtime, inode.ctime, inode.btime);
        } finally {
            inode.lock.unlock();
        }
    }

    /** Applies a change; a non-empty one also sets ctime to now. */
    InodeInfo setattr(long ino, AttributeChange change) throws IOException {
        InodeState inode = volume.inode(ino);
        if (change.mode().isPresent() && inode.type == FileType.SYMLINK) {
            throw new NotSupportedException("inode " + ino + " is a symbolic link: its mode is always 0777");
        }
        if (!change.isEmpty()) {
            Instant now = Instant.now();
            inode.lock.lock();
            try {
                change.mode().ifPresent(mode -> inode.mode = mode);
                change.uid().ifPresent(uid -> inode.uid = uid);
                change.gid().ifPresent(gid -> inode.gid = gid);
                change.atime().ifPresent(atime -> inode.atime = atime);
                change.mtime().ifPresent(mtime -> inode.mtime = mtime);
                inode.ctime = now;
            } finally {
                inode.lock.unlock();
            }
            volume.log.inodeChanged(inode);
        }
        return getattr(ino);
    }

    /**
     * A write starts: mtime and ctime now, without the metadata lock and without I/O, but when so many
     * inodes wait with changed times that one journal transaction would no longer take them: then it
     * commits (under the metadata lock).
     */
    void updateTimes(long ino, Instant now) throws IOException {
        volume.checkMounted();
        InodeState inode = volume.inode(ino);
        inode.modified(now);
        volume.log.timesChanged(ino);
        if (volume.log.timesPileUp()) {
            volume.metaLock.lock();
            try {
                volume.checkMounted();
                if (volume.log.timesPileUp()) {
                    volume.log.commit();
                }
            } finally {
                volume.metaLock.unlock();
            }
        }
    }

    byte[] readlink(long ino) throws IOException {
        InodeState inode = volume.inode(ino);
        if (inode.type != FileType.SYMLINK) {
            throw new NotLinkException("inode " + ino, null, "not a symbolic link");
        }
        return inode.target.clone();
    }

    byte[] getxattr(long ino, String name) throws IOException {
        byte[] value = volume.inode(ino).xattrs.get(name);
        if (value == null) {
            throw new NoSuchAttributeException("inode " + ino, name);
        }
        return value;
    }

    List<String> listxattr(long ino) throws IOException {
        return volume.inode(ino).xattrs.names();
    }

    void setxattr(long ino, String name, byte[] value, XattrMode mode) throws IOException {
        InodeState inode = volume.inode(ino);
        boolean exists = inode.xattrs.get(name) != null;
        if (mode == XattrMode.CREATE && exists) {
            throw new FileAlreadyExistsException("inode " + ino, null, "extended attribute '" + name + "' exists");
        }
        if (mode == XattrMode.REPLACE && !exists) {
            throw new NoSuchAttributeException("inode " + ino, name);
        }
        int size = inode.xattrs.sizeWith(name, value.length);
        if (size > Layout.MAX_XATTR_SET_BYTES) {
            throw new NoSpaceException("xfs-like: the extended attributes of inode " + ino + " would take " + size
                    + " bytes, more than the " + Layout.MAX_XATTR_SET_BYTES + " an inode holds");
        }
        XattrSet changed = inode.xattrs.copy();
        changed.put(name, value);
        store(inode, changed);
    }

    void removexattr(long ino, String name) throws IOException {
        InodeState inode = volume.inode(ino);
        XattrSet changed = inode.xattrs.copy();
        if (!changed.remove(name)) {
            throw new NoSuchAttributeException("inode " + ino, name);
        }
        store(inode, changed);
    }

    /** Gives the inode its new attribute set: blocks first (all or nothing), then memory, then the log. */
    private void store(InodeState inode, XattrSet changed) throws IOException {
        int needed = changed.isEmpty() ? 0 : Layout.chainBlocks(changed.encodedBytes(), volume.geometry.blockSize());
        volume.resizeChain(inode.xattrBlocks, needed, "the extended attributes of " + inode);
        inode.xattrs = changed;
        inode.statusChanged(Instant.now());
        volume.log.attachedChanged(inode);
    }
}
