package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentMap;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.adapter.support.ns.PosixNamespace;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileType;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NewInodeAttributes;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Directories and inode life cycle: the store {@link PosixNamespace} runs create, symlink, link,
 * lookup, unlink, rmdir, rename and exchange over (directory blocks, inode slots, the log), readdir, and
 * freeing an inode with everything it holds. Every method runs under the metadata lock in the caller's
 * transaction.
 *
 * <p>Link counts: a regular file or symbolic link has one per name; a directory has 2 plus one per
 * subdirectory (its name, its own "." and each child's ".."). A file or link that lost its last name keeps
 * its inode (link count 0) until {@code evict}; a removed directory is freed at once (it cannot be open).
 *
 * <p>Times, as Linux: a new or removed name sets the directory's mtime and ctime; a new inode has all
 * four times now; a link, unlink or rename sets the inode's ctime. A directory with the set-group-ID bit
 * gives new inodes its group, and new directories the bit.
 */
final class Namespace implements PosixNamespace.Store<InodeState> {
    private final XfsVolume volume;
    private final FileSpace space;
    /**
     * The directory block {@link #allocate} reserved for the entry of the inode it made, which the next
     * {@link #addEntry} (of that directory and name, in the same operation) fills; -1 if none.
     */
    private int reservedBlock = -1;
    private InodeState reservedDir;
    private String reservedName;

    Namespace(XfsVolume volume, FileSpace space) {
        this.volume = volume;
        this.space = space;
    }

    long lookup(long dirIno, String name) throws IOException {
        return PosixNamespace.lookup(this, dirIno, name);
    }

    List<DirEntry> readdir(long dirIno) throws IOException {
        return PosixNamespace.directory(this, dirIno).directory.list();
    }

    long create(long dirIno, String name, FileType type, NewInodeAttributes attributes) throws IOException {
        return PosixNamespace.create(this, dirIno, name, type, attributes);
    }

    long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes) throws IOException {
        return PosixNamespace.symlink(this, dirIno, name, target, attributes);
    }

    void link(long ino, long dirIno, String name) throws IOException {
        PosixNamespace.link(this, ino, dirIno, name);
    }

    void unlink(long dirIno, String name) throws IOException {
        PosixNamespace.unlink(this, dirIno, name);
    }

    void rmdir(long dirIno, String name) throws IOException {
        PosixNamespace.rmdir(this, dirIno, name);
    }

    long rename(long fromDirIno, String fromName, long toDirIno, String toName) throws IOException {
        return PosixNamespace.rename(this, fromDirIno, fromName, toDirIno, toName);
    }

    /**
     * Swaps two names in place (each entry keeps its directory block; only its inode number and type
     * change). Everything is logged in the caller's one transaction.
     */
    void exchange(long dir1Ino, String name1, long dir2Ino, String name2) throws IOException {
        PosixNamespace.exchange(this, dir1Ino, name1, dir2Ino, name2);
    }

    @Override
    public InodeState inode(long ino) throws IOException {
        return volume.inode(ino);
    }

    @Override
    public Optional<DirEntry> find(InodeState dir, String name) {
        DirectoryBlocks.Entry entry = dir.directory.get(name);
        return entry == null ? Optional.empty() : Optional.of(new DirEntry(name, entry.ino(), entry.type()));
    }

    @Override
    public boolean isEmpty(InodeState dir) {
        return dir.directory.isEmpty();
    }

    /**
     * Makes a new inode with its number, a symbolic link's target blocks (a target of up to
     * {@value XfsLayout#INLINE_TARGET_BYTES} bytes is kept in the slot) and its entry's directory block,
     * allocated in that order before anything else changes, so that running out of space changes nothing.
     */
    @Override
    public InodeState allocate(InodeState dir, String name, PosixNamespace.NewInode wanted) throws IOException {
        return allocate(dir, name, wanted, true);
    }

    /** {@link #allocate} without the directory block: the entry exists and will be pointed at the inode. */
    @Override
    public InodeState allocateForExistingEntry(InodeState dir, String name, PosixNamespace.NewInode wanted)
            throws IOException {
        return allocate(dir, name, wanted, false);
    }

    private InodeState allocate(InodeState dir, String name, PosixNamespace.NewInode wanted, boolean entry)
            throws IOException {
        long ino = volume.allocateInodeNumber();
        byte[] target = wanted.target();
        List<Long> blocks = new ArrayList<>();
        if (target != null && target.length > XfsLayout.INLINE_TARGET_BYTES) {
            volume.resizeChain(blocks, XfsLayout.chainBlocks(target.length, volume.geometry.blockSize()),
                    "the target of symbolic link '" + name + "'");
        }
        if (entry) {
            try {
                reservedBlock = reserveEntry(dir, name);
            } catch (IOException e) {
                volume.resizeChain(blocks, 0, "a symbolic link's target");
                throw e;
            }
            reservedDir = dir;
            reservedName = name;
        }
        InodeState inode = new InodeState(ino, wanted.type());
        inode.mode = wanted.mode();
        inode.uid = wanted.uid();
        inode.gid = wanted.gid();
        inode.born(wanted.now());
        inode.nlink = wanted.linkCount();
        inode.rdev = wanted.rdev();
        inode.fileFlags = InodeCodec.slotBits(FileFlag.inheritedFrom(InodeCodec.inodeFlags(dir.fileFlags),
                wanted.type()));
        inode.parent = wanted.type() == FileType.DIRECTORY ? wanted.dirIno() : 0;
        volume.inodes.put(ino, inode);
        volume.usedInodes.set((int) ino);
        if (wanted.type() == FileType.DIRECTORY) {
            inode.directory = new DirectoryBlocks(MetadataBlock.maxPayload(volume.geometry.blockSize()));
        }
        if (target != null) {
            inode.target = target;
            inode.diskSize = target.length;
            inode.targetBlocks.addAll(blocks);
            volume.log.attachedChanged(inode);
        } else {
            volume.log.inodeChanged(inode);
        }
        return inode;
    }

    /** Adds the entry in the block {@link #allocate} reserved for it, else in one {@link #reserveEntry} finds. */
    @Override
    public void addEntry(InodeState dir, String name, long ino, FileType type) throws IOException {
        boolean reserved = reservedBlock >= 0 && reservedDir == dir && reservedName.equals(name);
        int block = reserved ? reservedBlock : reserveEntry(dir, name);
        reservedBlock = -1;
        reservedDir = null;
        reservedName = null;
        dir.directory.add(name, ino, type, block);
        volume.nameAdded(ino);
        volume.log.dirBlockChanged(dir.ino, block);
    }

    /** Points the entry at another inode in its directory block. */
    @Override
    public void replaceEntry(InodeState dir, String name, long ino, FileType type) {
        DirectoryBlocks.Entry old = dir.directory.get(name);
        dir.directory.remove(name);
        dir.directory.add(name, ino, type, old.block());
        volume.nameRemoved(old.ino());
        volume.nameAdded(ino);
        volume.log.dirBlockChanged(dir.ino, old.block());
    }

    /** Removes a name, giving back empty blocks at the end of the directory. */
    @Override
    public void removeEntry(InodeState dir, String name) throws InvalidRangeException {
        long ino = dir.directory.get(name).ino();
        int block = dir.directory.remove(name);
        volume.nameRemoved(ino);
        volume.log.dirBlockChanged(dir.ino, block);
        while (dir.directory.lastBlockEmpty()) {
            long last = dir.directory.blockCount() - 1L;
            dir.directory.dropLastBlock();
            dir.lock.lock();
            try {
                for (Extent extent : dir.data.punch(last, 1)) {
                    freeMetadata(extent.deviceBlock(), extent.length());
                }
                dir.changed();
            } finally {
                dir.lock.unlock();
            }
            dir.diskSize -= volume.geometry.blockSize();
        }
    }

    @Override
    public void changed(InodeState inode) {
        volume.log.inodeChanged(inode);
    }

    /** An inode that lost its last name stays nameless until evicted: no link to it. */
    @Override
    public void linking(InodeState inode) throws NoSuchFileException {
        if (inode.nlink == 0) {
            throw new NoSuchFileException("inode " + inode.ino, null, "has no name left: cannot link to it");
        }
    }

    @Override
    public void freeDirectory(InodeState dir) throws IOException {
        freeInode(dir);
    }

    @Override
    public long parentOf(InodeState dir) {
        return dir.ino == XfsGeometry.ROOT_INO ? -1 : dir.parent;
    }

    /**
     * Frees an inode: its blocks, its extent list and its slot. The inode must have no name left.
     */
    void freeInode(InodeState inode) throws IOException {
        inode.lock.lock();
        try {
            if (inode.isDirectory()) {
                for (Extent extent : inode.data.punch(0, ExtentMap.END)) {
                    freeMetadata(extent.deviceBlock(), extent.length());
                }
            } else {
                space.punchFrom(inode, 0);
            }
            for (List<Long> blocks : List.of(inode.listBlocks, inode.targetBlocks, inode.xattrBlocks)) {
                for (long block : blocks) {
                    freeMetadata(block, 1);
                }
                blocks.clear();
            }
            inode.changed();
        } finally {
            inode.lock.unlock();
        }
        volume.inodes.remove(inode.ino);
        volume.usedInodes.clear((int) inode.ino);
        volume.sharingInodes.remove(inode.ino);
        volume.log.inodeChanged(inode.ino);
    }

    InodeState directory(long ino) throws IOException {
        return PosixNamespace.directory(this, ino);
    }

    /**
     * Finds the directory block for a new entry, allocating a block at the end of the directory if
     * none has room. Changes nothing but the allocation, so a failure leaves the directory as it was.
     *
     * @return the block index
     */
    private int reserveEntry(InodeState dir, String name) throws IOException {
        int block = dir.directory.placeFor(name);
        if (block < dir.directory.blockCount()) {
            return block;
        }
        volume.ensureAvailable(1);
        volume.space.take(1, true);
        BlockRange range;
        try {
            range = volume.allocate(1, space.nearHint(dir, dir.data, block));
        } catch (IOException e) {
            volume.space.release(1);
            throw e;
        }
        dir.lock.lock();
        try {
            dir.data.insert(Extent.written(block, 1, range.start()));
            dir.changed();
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("directory block " + block + " of inode " + dir.ino + " is mapped", e);
        } finally {
            dir.lock.unlock();
        }
        dir.diskSize += volume.geometry.blockSize();
        return block;
    }

    private void freeMetadata(long block, long length) {
        volume.allocator.free(block, length, true);
        volume.space.release(length);
    }
}
