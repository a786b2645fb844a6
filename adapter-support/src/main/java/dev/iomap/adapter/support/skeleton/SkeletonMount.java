package dev.iomap.adapter.support.skeleton;

import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One mount of a skeleton filesystem: the namespace (flat or a tree), attributes and durability; the
 * mappings are {@link FileBlocks}'. Every call holds the mount's monitor. A commit (fsync, fdatasync,
 * sync, unmount, or an allocation that needs the blocks freed since the last one) flushes the data
 * written back so far, then logs every changed inode-table, bitmap, directory and model block and
 * revokes every freed block in one journal transaction.
 *
 * <p>Not final, so that a test can plant a bug in a subclass ({@link SkeletonAdapter#createMount}).
 */
public class SkeletonMount implements MountedFileSystem, SuperOps, InodeOps, FileOps {
    private final Layout layout;
    private final BlockDevice device;
    private final Journal journal;
    private final Space space;
    private final BlockMapModel model;
    private final boolean tree;
    private final TreeMap<Long, SkeletonInode> inodes;
    private final Directories dirs;
    private final TreeSet<Long> freedInodeBlocks = new TreeSet<>();
    private final FileBlocks files;
    private long inodeCursor = Layout.ROOT;

    /**
     * @param parts what {@link SkeletonAdapter#mount} loaded: layout, journal, bitmap, inodes, directories
     */
    @SuppressWarnings("this-escape") // FileBlocks keeps the mount as its lock; it calls nothing during construction
    protected SkeletonMount(Parts parts) {
        this.layout = parts.layout;
        this.device = parts.device;
        this.journal = parts.journal;
        this.space = parts.space;
        this.model = parts.model;
        this.tree = parts.tree;
        this.inodes = parts.inodes;
        this.dirs = parts.dirs;
        this.files = new FileBlocks(this, model, space, layout.blockSize());
    }

    /** What a mount is made of, loaded by {@link SkeletonAdapter#mount}; opaque to subclasses. */
    public static final class Parts {
        final Layout layout;
        final BlockDevice device;
        final Journal journal;
        final Space space;
        final BlockMapModel model;
        final boolean tree;
        final TreeMap<Long, SkeletonInode> inodes;
        final Directories dirs;

        Parts(Layout layout, BlockDevice device, Journal journal, Space space, BlockMapModel model, boolean tree,
                TreeMap<Long, SkeletonInode> inodes, Directories dirs) {
            this.layout = layout;
            this.device = device;
            this.journal = journal;
            this.space = space;
            this.model = model;
            this.tree = tree;
            this.inodes = inodes;
            this.dirs = dirs;
        }
    }

    SkeletonInode inode(long ino) throws NoSuchFileException {
        SkeletonInode inode = inodes.get(ino);
        if (inode == null) {
            throw new NoSuchFileException("inode " + ino);
        }
        return inode;
    }

    SkeletonInode inodeOrNull(long ino) {
        return inodes.get(ino);
    }

    /** @return the block size of the image */
    @Override
    public int blockSize() {
        return layout.blockSize();
    }

    /** @return 1 */
    @Override
    public long rootIno() {
        return Layout.ROOT;
    }

    /** @return the model's most blocks per file times the block size */
    @Override
    public long maxFileSize() {
        return model.maxFileBlocks(layout.blockSize()) * layout.blockSize();
    }

    /** The attributes of an adapter without POSIX attributes; allocated bytes count what the model owns. */
    @Override
    public synchronized FileStat getattr(long ino) throws IOException {
        SkeletonInode inode = inode(ino);
        long[] owned = new long[1];
        model.owned(space, inode, block -> owned[0]++);
        return new FileStat(ino, inode.type(), inode.size(), owned[0] * layout.blockSize(),
                inode.links(), inode.mtimeMillis());
    }

    /** Looks a name up byte for byte. */
    @Override
    public synchronized long lookup(long dirIno, String name) throws IOException {
        return dirs.lookup(dirIno, name);
    }

    /**
     * A new inode (the next free number after the last one handed out) and its entry; a directory only
     * in a tree namespace.
     *
     * @throws NoSpaceException if the inode table or the device is full
     */
    @Override
    public synchronized long create(long dirIno, String name, FileType type) throws IOException {
        if (type != FileType.REGULAR && (type != FileType.DIRECTORY || !tree)) {
            throw new NotSupportedException("cannot create a " + type + " in this namespace");
        }
        SkeletonInode dir = inode(dirIno);
        if (dirs.get(dirIno).get(name) != null) {
            throw new FileAlreadyExistsException(name);
        }
        long ino = freeInodeNumber();
        SkeletonInode inode = new SkeletonInode(ino, type, model.inodeSlots());
        inode.setLinks(1);
        inode.touch(System.currentTimeMillis());
        dirs.add(space, dir, name, ino, type);
        inodes.put(ino, inode);
        if (type == FileType.DIRECTORY) {
            dirs.put(ino, new DirectoryBlocks(dev.iomap.adapter.support.MetadataBlock.maxPayload(blockSize())));
        }
        dir.touch(System.currentTimeMillis());
        inodeCursor = ino;
        return ino;
    }

    private long freeInodeNumber() throws NoSpaceException {
        for (long i = 1; i <= layout.inodeCount(); i++) {
            long ino = (inodeCursor + i - 1) % layout.inodeCount() + 1;
            if (!inodes.containsKey(ino)) {
                return ino;
            }
        }
        throw new NoSpaceException("all " + layout.inodeCount() + " inodes are in use");
    }

    /** @return the entries in byte order of their names */
    @Override
    public synchronized List<DirEntry> readdir(long dirIno) throws IOException {
        return dirs.get(dirIno).list();
    }

    /** Drops the name and a link; the inode and its blocks go at {@link #evict}. */
    @Override
    public synchronized void unlink(long dirIno, String name) throws IOException {
        SkeletonInode target = inode(dirs.lookup(dirIno, name));
        if (target.type() == FileType.DIRECTORY) {
            throw new FileSystemException(name, null, "Is a directory");
        }
        SkeletonInode dir = inode(dirIno);
        dirs.remove(space, dir, name);
        target.setLinks(target.links() - 1);
        dir.touch(System.currentTimeMillis());
    }

    /** Removes an empty directory and its inode at once. */
    @Override
    public synchronized void rmdir(long dirIno, String name) throws IOException {
        SkeletonInode target = inode(dirs.lookup(dirIno, name));
        if (target.type() != FileType.DIRECTORY) {
            throw new NotDirectoryException(name);
        }
        if (!dirs.get(target.ino()).isEmpty()) {
            throw new DirectoryNotEmptyException(name);
        }
        SkeletonInode dir = inode(dirIno);
        dirs.remove(space, dir, name);
        dir.touch(System.currentTimeMillis());
        dropInode(target, FreeReason.EVICT);
    }

    /** A replaced directory goes at once; a replaced file loses a link and is returned for eviction. */
    @Override
    public synchronized long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
        long ino = dirs.lookup(fromDir, fromName);
        DirectoryBlocks.Entry replaced = dirs.get(toDir).get(toName);
        if (replaced != null && replaced.ino() == ino) {
            return -1;
        }
        if (replaced != null && replaced.type() == FileType.DIRECTORY && !dirs.get(replaced.ino()).isEmpty()) {
            throw new DirectoryNotEmptyException(toName);
        }
        SkeletonInode moved = inode(ino);
        if (replaced != null) {
            dirs.remove(space, inode(toDir), toName);
        }
        dirs.remove(space, inode(fromDir), fromName);
        dirs.add(space, inode(toDir), toName, ino, moved.type());
        long now = System.currentTimeMillis();
        inode(fromDir).touch(now);
        inode(toDir).touch(now);
        if (replaced == null) {
            return -1;
        }
        SkeletonInode victim = inode(replaced.ino());
        if (victim.type() == FileType.DIRECTORY) {
            dropInode(victim, FreeReason.EVICT);
            return -1;
        }
        victim.setLinks(victim.links() - 1);
        return victim.ino();
    }

    /** Data blocks of the data area (metadata regions excluded) and inodes of the table. */
    @Override
    public synchronized FsStat statfs() {
        return new FsStat(blockSize(), layout.dataBlocks(), layout.dataBlocks() - space.usedDataBlocks(),
                layout.inodeCount(), layout.inodeCount() - inodes.size());
    }

    /** @return the allocate-at-write mappings of {@link FileBlocks} */
    @Override
    public SuperOps superOps() {
        return this;
    }

    @Override
    public InodeOps inodeOps() {
        return this;
    }

    @Override
    public FileOps fileOps() {
        return this;
    }

    @Override
    public IomapOps iomapOps() {
        return files;
    }

    /** @return the write-back side of {@link FileBlocks} */
    @Override
    public WritebackOps writebackOps() {
        return files;
    }

    /** Frees the blocks past the new size through the model (reusable after the next commit). */
    @Override
    public synchronized void setSize(IomapInode file, long newSize) throws IOException {
        SkeletonInode inode = inode(file.ino());
        files.free(inode, Layout.ceil(newSize, blockSize()), Long.MAX_VALUE, FreeReason.TRUNCATE);
        inode.setSize(newSize);
        inode.touch(System.currentTimeMillis());
    }

    /** @throws NotSupportedException always: the skeleton preallocates nothing */
    @Override
    public void fallocate(IomapInode file, FallocateMode mode, long offset, long length) throws IOException {
        throw new NotSupportedException("fallocate " + mode + " is not supported");
    }

    /** Raises the recorded size to the engine's (its data is written back), then commits everything. */
    @Override
    public synchronized void fsync(IomapInode file, boolean dataOnly) throws IOException {
        SkeletonInode inode = inode(file.ino());
        if (file.size() > inode.size()) {
            inode.setSize(file.size());
        }
        commit();
    }

    /** Frees the inode and, through the model, its blocks. */
    @Override
    public synchronized void evict(long ino) throws IOException {
        SkeletonInode inode = inodes.get(ino);
        if (inode != null) {
            dropInode(inode, FreeReason.EVICT);
        }
    }

    private void dropInode(SkeletonInode inode, FreeReason reason) throws IOException {
        files.free(inode, 0, Long.MAX_VALUE, reason);
        files.forget(inode.ino());
        inodes.remove(inode.ino());
        dirs.remove(inode.ino());
        freedInodeBlocks.add(layout.inodeBlock(inode.ino()));
    }

    /** Commits everything. */
    @Override
    public synchronized void sync() throws IOException {
        commit();
    }

    /** Commits everything and checkpoints the journal, so that its log is empty. */
    @Override
    public synchronized void unmount() throws IOException {
        commit();
        journal.checkpoint();
    }

    /**
     * After a mount: drops inodes without a name (unlinked while open before a power cut) and blocks
     * past each file's size (allocated by writes whose data never completed), and commits if that
     * changed anything.
     */
    synchronized void recover() throws IOException {
        for (SkeletonInode inode : List.copyOf(inodes.values())) {
            if (inode.links() <= 0 && inode.ino() != Layout.ROOT) {
                dropInode(inode, FreeReason.EVICT);
            } else if (inode.type() == FileType.REGULAR) {
                files.free(inode, Layout.ceil(inode.size(), blockSize()), Long.MAX_VALUE, FreeReason.TRUNCATE);
            }
        }
        if (space.dirty() || !freedInodeBlocks.isEmpty() || inodes.values().stream().anyMatch(SkeletonInode::dirty)) {
            commit();
        }
    }

    /**
     * Flushes the data written back so far, then makes every metadata change since the last commit
     * durable in one journal transaction; only then are the blocks freed since the last commit free.
     *
     * @throws IOException if the device fails or the transaction does not fit in the journal
     */
    protected final synchronized void commit() throws IOException {
        files.zeroUnsubmittedFresh();
        device.flush();
        dirs.flush(space);
        TreeSet<Long> inodeBlocks = new TreeSet<>(freedInodeBlocks);
        for (SkeletonInode inode : inodes.values()) {
            if (inode.dirty()) {
                inodeBlocks.add(layout.inodeBlock(inode.ino()));
            }
        }
        if (inodeBlocks.isEmpty() && !space.dirty()) {
            return;
        }
        try (Journal.Transaction tx = journal.begin()) {
            for (long block : inodeBlocks) {
                tx.log(block, InodeTable.encodeBlock(layout, block - layout.inodeStart(), inodes));
            }
            space.logTo(tx);
            tx.commit();
        }
        space.committed();
        freedInodeBlocks.clear();
        inodes.values().forEach(SkeletonInode::clean);
    }

    /** @return whether a commit would make blocks free that are not free yet */
    boolean commitFreesBlocks() {
        return space.hasFreedSinceCommit();
    }
}
