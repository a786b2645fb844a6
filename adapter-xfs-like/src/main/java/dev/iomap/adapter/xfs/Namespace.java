package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentMap;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.adapter.support.ns.PosixRules;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NewInodeAttributes;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Directories and inode life cycle: create, symlink, link, lookup, readdir, unlink, rmdir, rename, and
 * freeing an inode with everything it holds. Every method runs under the metadata lock (the caller's).
 *
 * <p>Link counts: a regular file or symbolic link has one per name; a directory has 2 plus one per
 * subdirectory (its name, its own "." and each child's ".."). A file or link that lost its last name keeps
 * its inode (link count 0) until {@code evict}; a removed directory is freed at once (it cannot be open).
 *
 * <p>Times, as Linux: a new or removed name sets the directory's mtime and ctime; a new inode has all
 * four times now; a link, unlink or rename sets the inode's ctime. A directory with the set-group-ID bit
 * gives new inodes its group, and new directories the bit.
 */
final class Namespace {
    private final XfsVolume volume;
    private final FileSpace space;

    Namespace(XfsVolume volume, FileSpace space) {
        this.volume = volume;
        this.space = space;
    }

    long lookup(long dirIno, String name) throws IOException {
        DirectoryBlocks.Entry entry = directory(dirIno).directory.get(name);
        if (entry == null) {
            throw new NoSuchFileException(name, null, "no such name in directory inode " + dirIno);
        }
        return entry.ino();
    }

    List<DirEntry> readdir(long dirIno) throws IOException {
        return directory(dirIno).directory.list();
    }

    /**
     * Creates an empty file or directory with the given attributes; all four times are now, and so are
     * the parent's mtime and ctime.
     */
    long create(long dirIno, String name, FileType type, NewInodeAttributes attributes) throws IOException {
        if (type == FileType.SYMLINK) {
            throw new IllegalArgumentException("symbolic links are created by symlink");
        }
        InodeState dir = directory(dirIno);
        checkAbsent(dir, name);
        long ino = volume.allocateInodeNumber();
        int block = reserveEntry(dir, name);
        InodeState inode = newInode(ino, type, attributes.mode(), attributes, dir);
        inode.nlink = type == FileType.DIRECTORY ? 2 : 1;
        inode.parent = type == FileType.DIRECTORY ? dirIno : 0;
        if (type == FileType.DIRECTORY) {
            inode.directory = new DirectoryBlocks(MetadataBlock.maxPayload(volume.geometry.blockSize()));
            dir.nlink++;
        }
        addEntry(dir, name, ino, type, block, inode.btime);
        volume.log.inodeChanged(inode);
        return ino;
    }

    /**
     * Creates a symbolic link (mode 0777, size the target's length). A target of up to
     * {@value XfsLayout#INLINE_TARGET_BYTES} bytes is kept in the slot, a longer one in symlink blocks,
     * allocated before anything else changes.
     */
    long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes) throws IOException {
        if (target.length < 1 || target.length > FileNames.MAX_TARGET_BYTES) {
            throw new IllegalArgumentException("a symbolic link's target has 1 to " + FileNames.MAX_TARGET_BYTES
                    + " bytes, not " + target.length);
        }
        InodeState dir = directory(dirIno);
        checkAbsent(dir, name);
        long ino = volume.allocateInodeNumber();
        List<Long> blocks = new ArrayList<>();
        if (target.length > XfsLayout.INLINE_TARGET_BYTES) {
            volume.resizeChain(blocks, XfsLayout.chainBlocks(target.length, volume.geometry.blockSize()),
                    "the target of symbolic link '" + name + "'");
        }
        int block;
        try {
            block = reserveEntry(dir, name);
        } catch (IOException e) {
            volume.resizeChain(blocks, 0, "a symbolic link's target");
            throw e;
        }
        InodeState inode = newInode(ino, FileType.SYMLINK, 0777, attributes, dir);
        inode.nlink = 1;
        inode.target = target.clone();
        inode.diskSize = target.length;
        inode.targetBlocks.addAll(blocks);
        addEntry(dir, name, ino, FileType.SYMLINK, block, inode.btime);
        volume.log.attachedChanged(inode);
        return ino;
    }

    /** Adds a name to a file or symbolic link: its link count up, its ctime and the directory's times now. */
    void link(long ino, long dirIno, String name) throws IOException {
        InodeState dir = directory(dirIno);
        InodeState inode = volume.inode(ino);
        if (inode.isDirectory()) {
            throw new FileSystemException("inode " + ino, null, "hard link to a directory");
        }
        if (inode.nlink == 0) {
            throw new NoSuchFileException("inode " + ino, null, "has no name left: cannot link to it");
        }
        if (inode.nlink == Integer.MAX_VALUE) {
            throw new FileSystemException("inode " + ino, null, "too many links");
        }
        checkAbsent(dir, name);
        int block = reserveEntry(dir, name);
        Instant now = Instant.now();
        addEntry(dir, name, ino, inode.type, block, now);
        inode.nlink++;
        inode.statusChanged(now);
        volume.log.inodeChanged(inode);
    }

    /**
     * A new inode with the owner asked for and the group as Linux's {@code inode_init_owner} gives it: in
     * a directory with the set-group-ID bit the parent's group, and a new directory keeps that bit.
     */
    private InodeState newInode(long ino, FileType type, int mode, NewInodeAttributes attributes, InodeState dir) {
        InodeState inode = new InodeState(ino, type);
        inode.mode = PosixRules.newMode(type, mode, dir.mode);
        inode.uid = attributes.uid();
        inode.gid = PosixRules.newGid(attributes, dir.mode, dir.gid);
        inode.born(Instant.now());
        volume.inodes.put(ino, inode);
        volume.usedInodes.set((int) ino);
        return inode;
    }

    private void checkAbsent(InodeState dir, String name) throws FileAlreadyExistsException {
        checkName(name);
        if (dir.directory.get(name) != null) {
            throw new FileAlreadyExistsException(name, null, "exists in directory inode " + dir.ino);
        }
    }

    /** Removes a name of a file or symbolic link: its link count down, its ctime and the directory's times now. */
    void unlink(long dirIno, String name) throws IOException {
        InodeState dir = directory(dirIno);
        DirectoryBlocks.Entry entry = existing(dir, name);
        if (entry.type() == FileType.DIRECTORY) {
            throw new FileSystemException(name, null, "is a directory: use rmdir");
        }
        Instant now = removeEntry(dir, name);
        InodeState inode = volume.inode(entry.ino());
        inode.nlink--;
        inode.statusChanged(now);
        volume.log.inodeChanged(inode);
    }

    void rmdir(long dirIno, String name) throws IOException {
        InodeState dir = directory(dirIno);
        DirectoryBlocks.Entry entry = existing(dir, name);
        if (entry.type() != FileType.DIRECTORY) {
            throw new NotDirectoryException(name);
        }
        InodeState target = volume.inode(entry.ino());
        if (!target.directory.isEmpty()) {
            throw new DirectoryNotEmptyException(name);
        }
        removeEntry(dir, name);
        dir.nlink--;
        freeInode(target);
    }

    long rename(long fromDirIno, String fromName, long toDirIno, String toName) throws IOException {
        InodeState fromDir = directory(fromDirIno);
        DirectoryBlocks.Entry moving = existing(fromDir, fromName);
        InodeState toDir = directory(toDirIno);
        checkName(toName);
        if (fromDirIno == toDirIno && fromName.equals(toName)) {
            return -1;
        }
        InodeState moved = volume.inode(moving.ino());
        refuseMoveIntoItself(moved, toDirIno, toName);
        DirectoryBlocks.Entry replaced = toDir.directory.get(toName);
        if (replaced != null && replaced.ino() == moving.ino()) {
            return -1;
        }
        long lostLastName = -1;
        Instant now = Instant.now();
        if (replaced != null) {
            lostLastName = replace(toDir, toName, replaced, moving, now);
        } else {
            addEntry(toDir, toName, moving.ino(), moving.type(), reserveEntry(toDir, toName), now);
        }
        removeEntry(fromDir, fromName, now);
        moved.statusChanged(now);
        volume.log.inodeChanged(moved);
        if (moved.isDirectory() && fromDirIno != toDirIno) {
            fromDir.nlink--;
            toDir.nlink++;
            moved.parent = toDirIno;
            volume.log.inodeChanged(moved);
        }
        return lostLastName;
    }

    /**
     * Swaps two names in place (each entry keeps its directory block; only its inode number and type
     * change). A directory that changes parent gets the new parent pointer, and the parents' link
     * counts follow their subdirectories. Everything is logged in the caller's one transaction.
     */
    void exchange(long dir1Ino, String name1, long dir2Ino, String name2) throws IOException {
        InodeState dir1 = directory(dir1Ino);
        InodeState dir2 = directory(dir2Ino);
        DirectoryBlocks.Entry first = existing(dir1, name1);
        DirectoryBlocks.Entry second = existing(dir2, name2);
        if (dir1Ino == dir2Ino && name1.equals(name2)) {
            return;
        }
        InodeState inode1 = volume.inode(first.ino());
        InodeState inode2 = volume.inode(second.ino());
        refuseMoveIntoItself(inode1, dir2Ino, name2);
        refuseMoveIntoItself(inode2, dir1Ino, name1);
        dir1.directory.remove(name1);
        dir1.directory.add(name1, second.ino(), second.type(), first.block());
        dir2.directory.remove(name2);
        dir2.directory.add(name2, first.ino(), first.type(), second.block());
        Instant now = Instant.now();
        dir1.modified(now);
        dir2.modified(now);
        inode1.statusChanged(now);
        inode2.statusChanged(now);
        volume.log.inodeChanged(inode1);
        volume.log.inodeChanged(inode2);
        volume.log.dirBlockChanged(dir1Ino, first.block());
        volume.log.dirBlockChanged(dir2Ino, second.block());
        if (dir1Ino != dir2Ino) {
            moveDirectory(inode1, dir1, dir2);
            moveDirectory(inode2, dir2, dir1);
        }
        volume.log.inodeChanged(dir1);
        volume.log.inodeChanged(dir2);
    }

    private void moveDirectory(InodeState inode, InodeState from, InodeState to) {
        if (!inode.isDirectory()) {
            return;
        }
        from.nlink--;
        to.nlink++;
        inode.parent = to.ino;
        volume.log.inodeChanged(inode);
    }

    /** Refuses to give {@code moved} a name in {@code dirIno} if that directory is inside it. */
    private void refuseMoveIntoItself(InodeState moved, long dirIno, String name) throws IOException {
        if (!moved.isDirectory()) {
            return;
        }
        long at = dirIno;
        for (int depth = 0; depth <= volume.inodes.size(); depth++, at = volume.inode(at).parent) {
            if (at == moved.ino) {
                throw new FileSystemException(name, null, "cannot move a directory into itself");
            }
            if (at == XfsGeometry.ROOT_INO) {
                return;
            }
        }
    }

    /**
     * Points {@code toName} at the moving inode instead of {@code replaced}.
     *
     * @return the replaced regular file, now without a name (evicted by the core), or -1 for a replaced
     *     directory, which is freed at once
     */
    private long replace(InodeState toDir, String toName, DirectoryBlocks.Entry replaced, DirectoryBlocks.Entry moving,
            Instant now) throws IOException {
        InodeState target = volume.inode(replaced.ino());
        if (target.isDirectory() && moving.type() != FileType.DIRECTORY) {
            throw new FileSystemException(toName, null, "is a directory");
        }
        if (!target.isDirectory() && moving.type() == FileType.DIRECTORY) {
            throw new NotDirectoryException(toName);
        }
        if (target.isDirectory() && !target.directory.isEmpty()) {
            throw new DirectoryNotEmptyException(toName);
        }
        toDir.directory.remove(toName);
        toDir.directory.add(toName, moving.ino(), moving.type(), replaced.block());
        volume.nameRemoved(replaced.ino());
        volume.nameAdded(moving.ino());
        volume.log.dirBlockChanged(toDir.ino, replaced.block());
        toDir.modified(now);
        volume.log.inodeChanged(toDir);
        if (target.isDirectory()) {
            toDir.nlink--;
            freeInode(target);
            return -1;
        }
        target.nlink--;
        target.statusChanged(now);
        volume.log.inodeChanged(target);
        return target.nlink == 0 ? target.ino : -1;
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
        InodeState dir = volume.inode(ino);
        if (!dir.isDirectory()) {
            throw new NotDirectoryException("inode " + ino);
        }
        return dir;
    }

    private DirectoryBlocks.Entry existing(InodeState dir, String name) throws NoSuchFileException {
        DirectoryBlocks.Entry entry = dir.directory.get(name);
        if (entry == null) {
            throw new NoSuchFileException(name, null, "no such name in directory inode " + dir.ino);
        }
        return entry;
    }

    /**
     * The core checks names before they get here; this keeps a direct caller of the mount from
     * storing a name the format cannot hold.
     *
     * @throws dev.iomap.api.UnrepresentableNameException if the name stands for no byte string
     * @throws InvalidPathException if it is empty, ".", "..", holds '/' or NUL, or is over 255 bytes
     */
    private static void checkName(String name) {
        FileNames.check(name);
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

    private void addEntry(InodeState dir, String name, long ino, FileType type, int block, Instant now) {
        dir.directory.add(name, ino, type, block);
        volume.nameAdded(ino);
        dir.modified(now);
        volume.log.dirBlockChanged(dir.ino, block);
        volume.log.inodeChanged(dir);
    }

    /**
     * Removes a name, giving back empty blocks at the end of the directory.
     *
     * @return the time set as the directory's mtime and ctime
     */
    private Instant removeEntry(InodeState dir, String name) throws InvalidRangeException {
        Instant now = Instant.now();
        removeEntry(dir, name, now);
        return now;
    }

    private void removeEntry(InodeState dir, String name, Instant now) throws InvalidRangeException {
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
        dir.modified(now);
        volume.log.inodeChanged(dir);
    }

    private void freeMetadata(long block, long length) {
        volume.allocator.free(block, length, true);
        volume.space.release(length);
    }
}
