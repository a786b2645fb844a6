package dev.iomap.testkit.snapfs;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.XattrMode;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.spi.WriteOps;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackOps;
import dev.iomap.spi.XattrOps;
import dev.iomap.testkit.snapfs.SnapState.Inode;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One snapfs mount. Every method holds the mount's monitor. Writes allocate blocks at
 * {@code begin} (PENDING, mapped NEW; the block maps are {@link SnapBlocks}'); writeback completion
 * marks them WRITTEN and moves the on-disk size; a commit (fsync and fdatasync if the adapter declares
 * DURABLE_FSYNC, sync, unmount) flushes the data, writes the whole metadata to the other slot and
 * flushes again. Blocks come from {@link SnapSpace}, which holds a freed block back until the next
 * commit if the last one references it. After {@link #unmount} the mount must not be used.
 *
 * <p>Times follow Linux: a new or removed name sets its directory's mtime and ctime, a link count or
 * attribute change the inode's ctime, truncate and fallocate mtime and ctime; writes set them through
 * {@link #updateTimes} when they start, never at writeback. Links, attributes and extended attributes
 * are {@link SnapInodes}'; like everything else they are in memory until the next commit.
 */
final class SnapMount implements MountedFileSystem, SuperOps, InodeOps, FileOps, XattrOps, IomapOps, WriteOps, WritebackOps {
    static final long MAX_FILE_SIZE = 1L << 40;

    private final BlockDevice device;
    private final SnapLayout layout;
    private final SnapState state;
    private final SnapSpace space;
    private final SnapBlocks blocks;
    private final SnapInodes inodes;
    private final int blockSize;
    private final AtomicReference<Runnable> afterWriteBegin;
    private final boolean durableFsync;
    private final boolean posixAttributes;
    private long sequence;

    /**
     * @param device the mounted device
     * @param layout its layout, from the superblock
     * @param state the newest commit's metadata; the mount owns it from now on
     * @param sequence that commit's sequence number
     * @param afterWriteBegin the adapter's test hook (see {@link SnapAdapter#runOnceAfterNextWriteBegin})
     * @param durableFsync whether fsync and fdatasync commit (the adapter declares DURABLE_FSYNC)
     * @param posixAttributes whether the adapter declares POSIX_ATTRIBUTES: without it new inodes get
     *     the default mode and owner 0, and getattr reports what an adapter without them reports
     */
    SnapMount(BlockDevice device, SnapLayout layout, SnapState state, long sequence,
            AtomicReference<Runnable> afterWriteBegin, boolean durableFsync, boolean posixAttributes) {
        this.device = device;
        this.afterWriteBegin = afterWriteBegin;
        this.durableFsync = durableFsync;
        this.posixAttributes = posixAttributes;
        this.layout = layout;
        this.state = state;
        this.sequence = sequence;
        this.blockSize = layout.blockSize();
        state.inodes.values().removeIf(inode -> inode.links <= 0 && inode.ino != SnapState.ROOT);
        this.space = new SnapSpace(layout, state.committedBlocks());
        this.blocks = new SnapBlocks(state, space, blockSize, posixAttributes);
        this.inodes = new SnapInodes(state, layout);
    }

    private Inode inode(long ino) throws NoSuchFileException {
        return inodes.inode(ino);
    }

    /** @return the block size the image was formatted with */
    @Override
    public int blockSize() {
        return blockSize;
    }

    /** @return the root directory's inode number, always 1 */
    @Override
    public long rootIno() {
        return SnapState.ROOT;
    }

    /** @return 1 TiB, whatever the device's size (space runs out first) */
    @Override
    public long maxFileSize() {
        return MAX_FILE_SIZE;
    }

    /**
     * Allocated bytes count every mapped block, pending, unwritten or written. Without POSIX attributes
     * declared: the default mode, owner 0 and the modification time in milliseconds as all four times.
     */
    @Override
    public synchronized FileStat getattr(long ino) throws IOException {
        Inode inode = inode(ino);
        long allocated = (long) inode.blocks.size() * blockSize;
        if (!posixAttributes) {
            return new FileStat(ino, inode.type, inode.size, allocated, inode.links, inode.mtime.toEpochMilli());
        }
        return new FileStat(ino, inode.type, inode.size, allocated, inode.links, inode.mode, inode.uid, inode.gid,
                inode.atime, inode.mtime, inode.ctime, inode.btime);
    }

    /**
     * Names are looked up as given: byte for byte (the one-to-one strings of {@link FileNames}),
     * case-sensitive, no normalisation.
     */
    @Override
    public synchronized long lookup(long dirIno, String name) throws IOException {
        Long ino = inode(dirIno).entries.get(name);
        if (ino == null) {
            throw new NoSuchFileException(name);
        }
        return ino;
    }

    /** As {@link #create(long, String, FileType, NewInodeAttributes)} with the type's defaults, owner 0. */
    @Override
    public synchronized long create(long dirIno, String name, FileType type) throws IOException {
        return create(dirIno, name, type, new NewInodeAttributes(NewInodeAttributes.defaultMode(type), 0, 0));
    }

    /**
     * Inode numbers are never reused. Never fails for space: metadata space is checked at commit. The
     * attributes are kept if POSIX attributes are declared.
     */
    @Override
    public synchronized long create(long dirIno, String name, FileType type, NewInodeAttributes attributes)
            throws IOException {
        return inodes.create(dirIno, name, type, posixAttributes ? attributes
                : new NewInodeAttributes(NewInodeAttributes.defaultMode(type), 0, 0)).ino;
    }

    /** A symbolic link: mode 0777, size the target's length, the target kept in the inode's attributes. */
    @Override
    public synchronized long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes)
            throws IOException {
        Inode link = inodes.create(dirIno, name, FileType.SYMLINK, new NewInodeAttributes(0777,
                posixAttributes ? attributes.uid() : 0, posixAttributes ? attributes.gid() : 0));
        link.target = target.clone();
        link.size = target.length;
        return link.ino;
    }

    /** @return the target exactly as created (a copy) */
    @Override
    public synchronized byte[] readlink(long ino) throws IOException {
        Inode inode = inode(ino);
        if (inode.target == null) {
            throw new NotLinkException("snapfs inode " + ino);
        }
        return inode.target.clone();
    }

    /** One more name and link; a directory is refused with EPERM (the core refuses it first). */
    @Override
    public synchronized void link(long ino, long dirIno, String name) throws IOException {
        Inode inode = inode(ino);
        if (inode.type == FileType.DIRECTORY) {
            throw new OperationNotPermittedException(name, "hard link to a directory");
        }
        Inode dir = inode(dirIno);
        if (dir.entries.containsKey(name)) {
            throw new FileAlreadyExistsException(name);
        }
        dir.entries.put(name, ino);
        inode.links++;
        Instant now = Instant.now();
        dir.modified(now);
        inode.ctime = now;
    }

    /** As {@link SnapInodes#setattr}. */
    @Override
    public synchronized FileStat setattr(long ino, AttributeChange change) throws IOException {
        inodes.setattr(inode(ino), change);
        return getattr(ino);
    }

    /** mtime and ctime; an evicted inode is left alone. */
    @Override
    public synchronized void updateTimes(IomapInode file, Instant now) {
        Inode inode = state.inodes.get(file.ino());
        if (inode != null) {
            inode.modified(now);
        }
    }

    /** As {@link SnapInodes#getxattr}. */
    @Override
    public synchronized byte[] getxattr(long ino, String name) throws IOException {
        return inodes.getxattr(inode(ino), name);
    }

    /** @return the names in {@link FileNames#BYTE_ORDER} (the attributes are a sorted map) */
    @Override
    public synchronized List<String> listxattr(long ino) throws IOException {
        return List.copyOf(inode(ino).xattrs.keySet());
    }

    /** As {@link SnapInodes#setxattr}. */
    @Override
    public synchronized void setxattr(long ino, String name, byte[] value, XattrMode mode) throws IOException {
        inodes.setxattr(inode(ino), name, value, mode);
    }

    /** As {@link SnapInodes#removexattr}. */
    @Override
    public synchronized void removexattr(long ino, String name) throws IOException {
        inodes.removexattr(inode(ino), name);
    }

    /** Entries in the byte order of their names ({@link FileNames#BYTE_ORDER}: a sorted map). */
    @Override
    public synchronized List<DirEntry> readdir(long dirIno) throws IOException {
        List<DirEntry> out = new ArrayList<>();
        for (Map.Entry<String, Long> entry : inode(dirIno).entries.entrySet()) {
            out.add(new DirEntry(entry.getKey(), entry.getValue(), inode(entry.getValue()).type));
        }
        return out;
    }

    /**
     * Drops the name and a link; the inode and its blocks go at {@link #evict}. Refuses a directory
     * with the C library's words, "Is a directory" (what errno mappers look for).
     */
    @Override
    public synchronized void unlink(long dirIno, String name) throws IOException {
        Inode target = inode(lookup(dirIno, name));
        if (target.type == FileType.DIRECTORY) {
            throw new FileSystemException(name, null, "Is a directory");
        }
        Inode dir = inode(dirIno);
        dir.entries.remove(name);
        target.links--;
        Instant now = Instant.now();
        dir.modified(now);
        target.ctime = now;
    }

    /** Removes an empty directory's name and inode at once (directories have no open files). */
    @Override
    public synchronized void rmdir(long dirIno, String name) throws IOException {
        Inode target = inode(lookup(dirIno, name));
        if (target.type != FileType.DIRECTORY) {
            throw new NotDirectoryException(name);
        }
        if (!target.entries.isEmpty()) {
            throw new DirectoryNotEmptyException(name);
        }
        Inode dir = inode(dirIno);
        dir.entries.remove(name);
        dir.modified(Instant.now());
        state.inodes.remove(target.ino);
    }

    /**
     * A replaced directory goes at once; a replaced file loses a link and is returned for eviction.
     * Two names of one inode: nothing happens, both stay (as Linux).
     */
    @Override
    public synchronized long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
        long ino = lookup(fromDir, fromName);
        Inode target = inode(toDir);
        Long replaced = target.entries.get(toName);
        if (replaced != null && replaced == ino) {
            return -1;
        }
        if (replaced != null) {
            Inode victim = inode(replaced);
            if (victim.type == FileType.DIRECTORY && !victim.entries.isEmpty()) {
                throw new DirectoryNotEmptyException(toName);
            }
        }
        Inode source = inode(fromDir);
        source.entries.remove(fromName);
        target.entries.put(toName, ino);
        Instant now = Instant.now();
        source.modified(now);
        target.modified(now);
        inode(ino).ctime = now;
        if (replaced == null) {
            return -1;
        }
        Inode victim = inode(replaced);
        if (victim.type == FileType.DIRECTORY) {
            state.inodes.remove(replaced);
            return -1;
        }
        victim.links--;
        victim.ctime = now;
        return replaced;
    }

    /**
     * Swaps the two entries in memory; the next state commit writes both or, after a power cut
     * before it, neither. Snapfs keeps no parent pointers or directory link counts.
     */
    @Override
    public synchronized void exchange(long dir1, String name1, long dir2, String name2) throws IOException {
        long first = lookup(dir1, name1);
        long second = lookup(dir2, name2);
        inode(dir1).entries.put(name1, second);
        inode(dir2).entries.put(name2, first);
        Instant now = Instant.now();
        inode(dir1).modified(now);
        inode(dir2).modified(now);
        inode(first).ctime = now;
        inode(second).ctime = now;
    }

    /** Counts data blocks only (superblock and slots excluded); inodes are unbounded. */
    @Override
    public synchronized FsStat statfs() {
        long freeBlocks = layout.dataBlocks() - space.usedDataBlocks();
        return new FsStat(blockSize, layout.dataBlocks(), freeBlocks, Long.MAX_VALUE, Long.MAX_VALUE);
    }

    /** @return this mount: mappings come from its block maps */
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
    public XattrOps xattrOps() {
        return this;
    }

    @Override
    public IomapOps iomapOps() {
        return this;
    }

    /** @return this mount */
    @Override
    public WritebackOps writebackOps() {
        return this;
    }

    // ---- mapping (the block maps are SnapBlocks') ----

    /**
     * The mapping of {@link SnapBlocks#map}; runs the adapter's test hook, if set, after a write's
     * mapping is made.
     */
    @Override
    public synchronized IomapMapping begin(IomapInode file, long pos, long length, Set<IomapRequest> request)
            throws IOException {
        IomapMapping mapping = blocks.map(inode(file.ino()), pos, length, request);
        if (request.contains(IomapRequest.WRITE)) {
            Runnable hook = afterWriteBegin.getAndSet(null);
            if (hook != null) {
                hook.run();
            }
        }
        return mapping;
    }

    /** @return this: the write ops are {@link #valid} alone */
    @Override
    public WriteOps writeOps() {
        return this;
    }

    /** As {@link SnapBlocks#valid}: stale once the inode's blocks changed (the kernel's {@code iomap_valid}). */
    @Override
    public synchronized boolean valid(IomapInode file, Iomap iomap) {
        return blocks.valid(file, iomap);
    }

    /** {@link SnapBlocks#mapBlocks} under the mount's lock, then added to the ioend outside it. */
    @Override
    public long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException {
        Iomap iomap;
        synchronized (this) {
            iomap = blocks.mapBlocks(inode(wpc.inode().ino()), pos, length);
        }
        return wpc.addToIoend(iomap, pos, length);
    }

    /** As {@link SnapBlocks#ioendCompleted}: blocks WRITTEN, size raised. */
    @Override
    public synchronized void ioendCompleted(IomapInode file, IoendCompletion completion) {
        blocks.ioendCompleted(file, completion);
    }

    /** Frees the blocks past the new size (committed ones after the next commit); mtime and ctime now. */
    @Override
    public synchronized void setSize(IomapInode file, long newSize) throws IOException {
        Inode inode = inode(file.ino());
        blocks.free(inode, (newSize + blockSize - 1) / blockSize, Long.MAX_VALUE);
        inode.size = newSize;
        inode.modified(Instant.now());
    }

    /** As {@link SnapBlocks#fallocate}; mtime and ctime now (as xfs's {@code file_modified}). */
    @Override
    public synchronized void fallocate(IomapInode file, FallocateMode mode, long offset, long length)
            throws IOException {
        Inode inode = inode(file.ino());
        blocks.fallocate(inode, mode, offset, length);
        inode.modified(Instant.now());
    }

    // ---- durability ----

    /**
     * Raises the file's size to what the engine has, then commits everything, data and metadata of
     * every file (a whole-filesystem snapshot is the only commit snapfs has); without DURABLE_FSYNC it
     * commits nothing.
     */
    @Override
    public synchronized void fsync(IomapInode file, boolean dataOnly) throws IOException {
        Inode inode = inode(file.ino());
        inode.size = Math.max(inode.size, file.size());
        if (durableFsync) {
            commit();
        }
    }

    /** Drops the inode and frees its blocks (committed ones after the next commit). */
    @Override
    public synchronized void evict(long ino) throws IOException {
        Inode inode = state.inodes.remove(ino);
        if (inode != null) {
            blocks.free(inode, 0, Long.MAX_VALUE);
        }
    }

    /** Commits: data flush, metadata to the other slot, flush. */
    @Override
    public synchronized void sync() throws IOException {
        commit();
    }

    /** Commits, as {@link #sync}. */
    @Override
    public synchronized void unmount() throws IOException {
        commit();
    }

    /**
     * Data first, then the metadata in the other slot, then a flush; only then are blocks freed since
     * the last commit reusable. A commit that fails may still have reached the device, so the blocks
     * it references stay protected as well as the last commit's.
     */
    private void commit() throws IOException {
        device.flush();
        BitSet referenced = state.committedBlocks();
        space.committing(referenced);
        layout.writeSlot(device, sequence + 1, state.serialize());
        device.flush();
        sequence++;
        space.committed(referenced);
    }
}
