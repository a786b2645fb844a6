package dev.iomap.adapter.xfs;

import java.util.Set;
import dev.iomap.api.FileFlag;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.ns.ChainBlocks;
import dev.iomap.adapter.support.ns.XattrSet;
import dev.iomap.api.AtomicWriteLimits;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.XattrMode;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Attributes of inodes: stat, {@code chmod}/{@code chown}/{@code utimensat}, write times, symbolic-link
 * targets and extended attributes. Every method but {@link #updateTimes} runs under the metadata lock
 * (the caller's).
 *
 * <p>Extended attributes live in memory in {@link InodeState#xattrs} and on the device, encoded
 * ({@link XattrSet}), in a chain of {@code XATR} blocks. Like XFS's remote attribute values, the chain
 * never goes through the journal: each change writes a whole new chain copy-on-write into freshly
 * allocated blocks, directly to the device, and only the inode slot that points at it joins the running
 * transaction. The new blocks are free in the committed state until that transaction commits (whose
 * device flush comes before its journal write, so the chain is durable first); the old chain's blocks
 * are freed in the same transaction and stay busy until a checkpoint, so nothing overwrites them while
 * the committed state may still point at them. After a power cut the old set or the new one is there,
 * and a value of 64 KiB fits whatever the journal's size. An inode holds at most
 * {@value XfsLayout#MAX_XATTR_SET_BYTES} encoded bytes of them (two values of 64 KiB with their names).
 */
final class AttributeOps {
    private final XfsVolume volume;

    AttributeOps(XfsVolume volume) {
        this.volume = volume;
    }

    FileStat getattr(long ino) throws IOException {
        InodeState inode = volume.inode(ino);
        inode.lock.lock();
        try {
            long blocks = inode.data.mappedBlocks() + inode.cow.mappedBlocks() + inode.attachedBlocks();
            return new FileStat(ino, inode.type, inode.diskSize, blocks * volume.geometry.blockSize(), inode.nlink,
                    inode.mode, inode.uid, inode.gid, inode.atime, inode.mtime, inode.ctime, inode.btime,
                    AtomicWriteLimits.NONE, inode.rdev);
        } finally {
            inode.lock.unlock();
        }
    }

    /** Applies a change; a non-empty one but a read's access also sets ctime to now. */
    FileStat setattr(long ino, AttributeChange change) throws IOException {
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
                if (change.setsCtime()) {
                    inode.ctime = now;
                }
            } finally {
                inode.lock.unlock();
            }
            volume.log.inodeChanged(inode);
        }
        return getattr(ino);
    }

    /** @return the inode's flags */
    Set<FileFlag> getflags(long ino) throws IOException {
        InodeState inode = volume.inode(ino);
        inode.lock.lock();
        try {
            return InodeCodec.inodeFlags(inode.fileFlags);
        } finally {
            inode.lock.unlock();
        }
    }

    /** Sets the inode's flags and its ctime; the slot joins the running transaction. */
    void setflags(long ino, Set<FileFlag> flags) throws IOException {
        for (FileFlag flag : flags) {
            if (!InodeCodec.keeps(flag)) {
                throw new NotSupportedException("xfs-like keeps no " + flag + " flag (inode " + ino + ")");
            }
        }
        InodeState inode = volume.inode(ino);
        inode.lock.lock();
        try {
            inode.fileFlags = InodeCodec.slotBits(flags);
            inode.ctime = Instant.now();
        } finally {
            inode.lock.unlock();
        }
        volume.log.inodeChanged(inode);
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
        if (size > XfsLayout.MAX_XATTR_SET_BYTES) {
            throw new NoSpaceException("xfs-like: the extended attributes of inode " + ino + " would take " + size
                    + " bytes, more than the " + XfsLayout.MAX_XATTR_SET_BYTES + " an inode holds");
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

    /**
     * Gives the inode its new attribute set: a new chain written out of the journal first (all or
     * nothing), then memory, the old chain's blocks freed, and the inode slot into the running transaction.
     */
    private void store(InodeState inode, XattrSet changed) throws IOException {
        List<Long> fresh = changed.isEmpty() ? List.of() : writeChain(inode.ino, changed.encode());
        List<Long> old = List.copyOf(inode.xattrBlocks);
        inode.xattrBlocks.clear();
        inode.xattrBlocks.addAll(fresh);
        inode.xattrs = changed;
        freeRuns(old);
        volume.space.release(old.size());
        inode.statusChanged(Instant.now());
        volume.log.inodeChanged(inode);
    }

    /**
     * Allocates a chain for {@code content} and writes its blocks straight to the device (not durable
     * until the next commit flushes it). Nothing references the blocks yet: a crash before the commit that
     * points the slot at them leaves them free. On failure the blocks and their space are given back.
     *
     * @return the chain's blocks, in order
     * @throws NoSpaceException if there are not enough free blocks
     */
    private List<Long> writeChain(long owner, byte[] content) throws IOException {
        int blockSize = volume.geometry.blockSize();
        int needed = XfsLayout.chainBlocks(content.length, blockSize);
        volume.ensureAvailable(needed);
        volume.space.take(needed, true);
        List<Long> chain = new ArrayList<>(needed);
        try {
            while (chain.size() < needed) {
                BlockRange range = volume.allocate(needed - chain.size(), chain.isEmpty() ? -1 : chain.getLast() + 1);
                for (long block = range.start(); block < range.end(); block++) {
                    chain.add(block);
                }
            }
            int capacity = XfsLayout.chainCapacity(blockSize);
            long sequence = volume.log.commits() + 1;
            for (int i = 0; i < needed; i++) {
                long next = i + 1 < needed ? chain.get(i + 1) : 0;
                MetadataBlock.write(volume.device, chain.get(i), XfsLayout.XATTR_BLOCK, sequence,
                        ChainBlocks.encode(owner, next, i, content, capacity));
            }
        } catch (IOException e) {
            freeRuns(chain);
            volume.space.release(needed);
            throw e;
        }
        return chain;
    }

    /** Frees chain blocks as metadata, a run of consecutive blocks at a time. */
    private void freeRuns(List<Long> blocks) {
        int i = 0;
        while (i < blocks.size()) {
            long start = blocks.get(i);
            int length = 1;
            while (i + length < blocks.size() && blocks.get(i + length) == start + length
                    && volume.geometry.agOf(start) == volume.geometry.agOf(start + length)) {
                length++;
            }
            volume.allocator.free(start, length, true);
            i += length;
        }
    }
}
