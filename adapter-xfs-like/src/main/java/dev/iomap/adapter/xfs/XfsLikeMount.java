package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.BlockSizeView;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentMap;
import dev.iomap.adapter.support.ExtentState;
import dev.iomap.adapter.support.Journal;
import dev.iomap.api.FileStat;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.adapter.support.ns.PosixNamespace;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.XattrMode;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.spi.WritebackOps;
import dev.iomap.spi.XattrOps;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One mounted xfs-like filesystem: the adapter's side of the mount.
 *
 * <p>Mount reads the superblock, replays the journal, loads every metadata structure (verifying its
 * checksum and its own rules), runs fsck's checks across structures ({@link XfsFsck#verifyForMount}),
 * frees what a crash left behind (unlinked inodes still allocated, COW staging extents) and
 * marks the image in use. Unmount releases every reservation, frees unlinked inodes, commits,
 * checkpoints the journal and marks the image clean.
 *
 * <p>When the running filesystem finds its metadata inconsistent it shuts down
 * ({@link XfsVolume#shutdown}): every later operation, unmount included, fails with
 * {@link dev.iomap.api.FileSystemShutdownException} and nothing more is written.
 *
 * <p>Thread-safe; see {@link XfsVolume} for the locks. Every operation changing metadata runs under the
 * metadata lock and ends by letting the running transaction commit if it has grown large; fsync, sync
 * and unmount commit it.
 */
final class XfsLikeMount implements MountedFileSystem, SuperOps, InodeOps, FileOps, XattrOps {
    private final XfsVolume volume;
    private final FileSpace space;
    private final Namespace namespace;
    private final XfsIomapOps iomapOps;
    private final XfsWritebackOps writebackOps;
    private final AttributeOps attributes;

    private XfsLikeMount(XfsVolume volume) {
        this.volume = volume;
        this.attributes = new AttributeOps(volume);
        this.space = new FileSpace(volume);
        this.namespace = new Namespace(volume, space);
        this.writebackOps = new XfsWritebackOps(volume, space);
        this.iomapOps = new XfsIomapOps(volume, writebackOps);
    }

    static XfsLikeMount mount(BlockDevice raw) throws IOException {
        XfsSuperblock superblock = XfsSuperblock.read(raw);
        XfsGeometry geometry = superblock.geometry();
        BlockDevice device = BlockSizeView.of(raw, geometry.blockSize());
        Journal journal = Journal.open(device, geometry.journalStart(), geometry.journalBlocks());
        journal.replay();
        ImageLoader.Image image = new ImageLoader(device, geometry, true).load();
        XfsFsck.verifyForMount(geometry, image);
        XfsVolume volume = new XfsVolume(device, superblock, journal, new BlockAllocator(geometry, image.groups));
        volume.initialisedTableBlocks = image.initialisedTableBlocks;
        for (InodeState inode : image.inodes.values()) {
            volume.inodes.put(inode.ino, inode);
            volume.referencesLoaded(inode);
            volume.usedInodes.set((int) inode.ino);
            if (inode.hasShared()) {
                volume.sharingInodes.add(inode.ino);
            }
            if (inode.isDirectory()) {
                inode.directory.entries().forEach(entry -> volume.nameAdded(entry.ino()));
            }
        }
        InodeState root = volume.inodes.get(XfsGeometry.ROOT_INO);
        if (root == null || !root.isDirectory()) {
            throw new CorruptFileSystemException("xfs-like: the root directory (inode 1, inode table "
                    + XfsLayout.where(geometry.inodeBlock(1), geometry.blockSize()) + ") is missing");
        }
        XfsLikeMount mount = new XfsLikeMount(volume);
        mount.recover();
        superblock.withClean(false).write(device);
        device.flush();
        return mount;
    }

    /** Frees what a crash left: inodes with no name, and COW staging extents whose I/O never completed. */
    private void recover() throws IOException {
        volume.metaLock.lock();
        try {
            for (InodeState inode : List.copyOf(volume.inodes.values())) {
                if (inode.nlink == 0) {
                    namespace.freeInode(inode);
                } else if (!inode.cow.isEmpty()) {
                    inode.lock.lock();
                    try {
                        space.punch(inode, inode.cow, 0, ExtentMap.END);
                    } finally {
                        inode.lock.unlock();
                    }
                }
            }
            volume.log.commit();
        } finally {
            volume.metaLock.unlock();
        }
    }

    /** The most blocks of one atomic write: see {@link #atomicWriteLimits}. */
    static final int ATOMIC_WRITE_MAX_BLOCKS = 16;

    @Override
    public int blockSize() {
        return volume.geometry.blockSize();
    }

    @Override
    public long rootIno() {
        return XfsGeometry.ROOT_INO;
    }

    @Override
    public long maxFileSize() {
        return volume.geometry.maxFileSize();
    }

    /**
     * XFS's software atomic writes (6.16): from one block up to {@link #ATOMIC_WRITE_MAX_BLOCKS}. An atomic
     * write is staged in the COW fork and remapped in one transaction
     * ({@link XfsWritebackOps#atomicWriteCompleted}), which must fit the half of the smallest journal
     * that one operation may take ({@link Geometry#MIN_JOURNAL_BLOCKS}): the remap of 16 blocks changes at
     * most 16 extents of the inode (its slot and extent-list blocks) and the allocation-group blocks of
     * the old and new blocks, as XFS bounds its unit max by the log reservation of the remap.
     */
    @Override
    public dev.iomap.api.AtomicWriteLimits atomicWriteLimits() {
        int block = volume.geometry.blockSize();
        return dev.iomap.api.AtomicWriteLimits.of(block, block * ATOMIC_WRITE_MAX_BLOCKS);
    }

    @Override
    public FileStat getattr(long ino) throws IOException {
        return read(() -> attributes.getattr(ino));
    }

    @Override
    public long lookup(long dirIno, String name) throws IOException {
        return read(() -> namespace.lookup(dirIno, name));
    }

    @Override
    public List<DirEntry> readdir(long dirIno) throws IOException {
        return read(() -> namespace.readdir(dirIno));
    }

    /** Creates with the type's default mode, owned by uid and gid 0. */
    @Override
    public long create(long dirIno, String name, FileType type) throws IOException {
        return create(dirIno, name, type, new NewInodeAttributes(NewInodeAttributes.defaultMode(type), 0, 0));
    }

    @Override
    public long create(long dirIno, String name, FileType type, NewInodeAttributes attributes) throws IOException {
        return change(() -> namespace.create(dirIno, name, type, attributes));
    }

    @Override
    public long mknod(long dirIno, String name, FileType type, long rdev, NewInodeAttributes attributes)
            throws IOException {
        return change(() -> PosixNamespace.mknod(namespace, dirIno, name, type, rdev, attributes));
    }

    @Override
    public long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes) throws IOException {
        return change(() -> namespace.symlink(dirIno, name, target, attributes));
    }

    @Override
    public byte[] readlink(long ino) throws IOException {
        return read(() -> attributes.readlink(ino));
    }

    @Override
    public void link(long ino, long dirIno, String name) throws IOException {
        change(() -> {
            namespace.link(ino, dirIno, name);
            return 0L;
        });
    }

    @Override
    public FileStat setattr(long ino, AttributeChange change) throws IOException {
        FileStat[] result = new FileStat[1];
        change(() -> {
            result[0] = attributes.setattr(ino, change);
            return 0L;
        });
        return result[0];
    }

    @Override
    public Set<FileFlag> getflags(long ino) throws IOException {
        return read(() -> attributes.getflags(ino));
    }

    /** Flags change as any attribute: in the running transaction, durable with the next commit or fsync. */
    @Override
    public void setflags(long ino, Optional<IomapInode> cached, Set<FileFlag> flags) throws IOException {
        change(() -> {
            attributes.setflags(ino, flags);
            return 0L;
        });
    }

    /** Sets mtime and ctime under the inode's lock only; the slot joins the next commit. */
    @Override
    public void updateTimes(IomapInode inode, Instant now) throws IOException {
        attributes.updateTimes(inode.ino(), now);
    }

    @Override
    public byte[] getxattr(long ino, String name) throws IOException {
        return read(() -> attributes.getxattr(ino, name));
    }

    @Override
    public List<String> listxattr(long ino) throws IOException {
        return read(() -> attributes.listxattr(ino));
    }

    @Override
    public void setxattr(long ino, String name, byte[] value, XattrMode mode) throws IOException {
        change(() -> {
            attributes.setxattr(ino, name, value, mode);
            return 0L;
        });
    }

    @Override
    public void removexattr(long ino, String name) throws IOException {
        change(() -> {
            attributes.removexattr(ino, name);
            return 0L;
        });
    }

    @Override
    public void unlink(long dirIno, String name) throws IOException {
        change(() -> {
            namespace.unlink(dirIno, name);
            return 0L;
        });
    }

    @Override
    public void rmdir(long dirIno, String name) throws IOException {
        change(() -> {
            namespace.rmdir(dirIno, name);
            return 0L;
        });
    }

    @Override
    public long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
        return change(() -> namespace.rename(fromDir, fromName, toDir, toName));
    }

    @Override
    public long renameWhiteout(long fromDir, String fromName, long toDir, String toName, NewInodeAttributes whiteout)
            throws IOException {
        return change(() -> PosixNamespace.renameWhiteout(namespace, fromDir, fromName, toDir, toName, whiteout));
    }

    /** One metadata transaction: after a power cut the journal replays all of it or none. */
    @Override
    public void exchange(long dir1, String name1, long dir2, String name2) throws IOException {
        change(() -> {
            namespace.exchange(dir1, name1, dir2, name2);
            return 0L;
        });
    }

    /** @throws dev.iomap.api.FileSystemShutdownException after a shutdown, as every operation */
    @Override
    public FsStat statfs() throws IOException {
        volume.checkNotShutDown();
        long inodes = volume.geometry.inodeCount() - 1;
        volume.metaLock.lock();
        try {
            return new FsStat(blockSize(), volume.geometry.totalBlocks(), volume.space.availableForData(), inodes,
                    inodes - volume.usedInodes.cardinality());
        } finally {
            volume.metaLock.unlock();
        }
    }

    @Override
    public String label() throws IOException {
        volume.checkNotShutDown();
        return volume.superblock.label();
    }

    /**
     * Rewrites the superblock with the new label (unclean, as it is while mounted) and flushes it, under
     * the metadata lock that unmount's clean superblock takes too, so the last superblock written has it.
     */
    @Override
    public void setLabel(String label) throws IOException {
        XfsSuperblock.checkLabel(label);
        volume.metaLock.lock();
        try {
            volume.checkMounted();
            XfsSuperblock changed = volume.superblock.withLabel(label);
            changed.withClean(false).write(volume.device);
            volume.device.flush();
            volume.superblock = changed;
        } finally {
            volume.metaLock.unlock();
        }
    }

    /**
     * XFS's {@code xfs_ioc_trim}: the running transaction is committed first (XFS forces its log), so
     * that space freed before the call is durably free and no longer busy; then, one allocation group at
     * a time, under the metadata lock (so nothing is allocated from an extent while it is discarded),
     * every extent of the group's available free space (busy extents, freed by a transaction not yet
     * durable, are not in it) that overlaps the range by at least the minimum is discarded.
     */
    @Override
    public long trim(long start, long length, long minLength) throws IOException {
        volume.checkMounted();
        long bs = blockSize();
        long totalBlocks = volume.geometry.totalBlocks();
        if (start < 0 || minLength < 0 || length < bs || start >= totalBlocks * bs) {
            throw new InvalidRangeException("xfs-like: trim of " + length + " bytes at " + start + " (extents of at least "
                    + minLength + "): the range must start inside the " + totalBlocks * bs
                    + "-byte file system and cover a block");
        }
        long first = start / bs;
        long end = Math.min(totalBlocks, first + Math.ceilDiv(Math.min(length, totalBlocks * bs - first * bs), bs));
        long minBlocks = Math.max(1, Math.ceilDiv(minLength, bs));
        sync();
        long trimmed = 0;
        for (int agno = 0; agno < volume.geometry.agCount(); agno++) {
            volume.metaLock.lock();
            try {
                volume.checkMounted();
                for (BlockRange free : volume.allocator.group(agno).available().freeExtents()) {
                    long from = Math.max(free.start(), first);
                    long to = Math.min(free.start() + free.length(), end);
                    if (to - from >= minBlocks) {
                        volume.device.discard(from * bs, (to - from) * bs);
                        trimmed += (to - from) * bs;
                    }
                }
            } finally {
                volume.metaLock.unlock();
            }
        }
        return trimmed;
    }

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
        return iomapOps;
    }

    @Override
    public WritebackOps writebackOps() {
        return writebackOps;
    }

    @Override
    public void setSize(IomapInode inode, long newSize) throws IOException {
        InvalidRangeException.checkRange("xfs-like setSize of inode " + inode.ino(), newSize, 0, maxFileSize());
        InodeState state = volume.fileForIo(inode.ino());
        change(() -> {
            state.lock.lock();
            try {
                state.protectedEnd = newSize;
                space.punchFrom(state, Math.ceilDiv(newSize, blockSize()));
                state.diskSize = newSize;
                state.modified(Instant.now());
                volume.log.inodeChanged(state);
            } finally {
                state.lock.unlock();
            }
            return 0L;
        });
    }

    @Override
    public void fallocate(IomapInode inode, FallocateMode mode, long offset, long length) throws IOException {
        InvalidRangeException.checkRange("xfs-like fallocate of inode " + inode.ino(), offset, length, maxFileSize());
        InodeState state = volume.fileForIo(inode.ino());
        long first = mode == FallocateMode.ALLOCATE ? offset / blockSize() : Math.ceilDiv(offset, blockSize());
        long end = mode == FallocateMode.ALLOCATE ? Math.ceilDiv(offset + length, blockSize())
                : (offset + length) / blockSize();
        if (end <= first) {
            return;
        }
        change(() -> {
            state.lock.lock();
            try {
                switch (mode) {
                    case ALLOCATE -> {
                        volume.ensureAvailable(FileSpace.holeBlocks(state, first, end - first));
                        space.fillHoles(state, first, end - first, false);
                    }
                    case PUNCH_HOLE -> {
                        space.punch(state, state.data, first, end - first);
                        space.punch(state, state.cow, first, end - first);
                    }
                    case ZERO_RANGE -> space.zeroRange(state, first, end - first);
                }
                state.modified(Instant.now());
                volume.log.inodeChanged(state);
            } finally {
                state.lock.unlock();
            }
            return 0L;
        });
    }

    @Override
    public void cloneRange(IomapInode source, long srcOffset, IomapInode target, long dstOffset, long length)
            throws IOException {
        int blockSize = blockSize();
        if (srcOffset % blockSize != 0 || dstOffset % blockSize != 0) {
            throw new InvalidRangeException("xfs-like clone: offsets " + srcOffset + " and " + dstOffset
                    + " must be multiples of the block size " + blockSize);
        }
        InvalidRangeException.checkRange("xfs-like clone source", srcOffset, length, maxFileSize());
        InvalidRangeException.checkRange("xfs-like clone target", dstOffset, length, maxFileSize());
        long blocks = Math.ceilDiv(length, blockSize);
        if (length % blockSize != 0 && dstOffset + length < target.size()) {
            throw new InvalidRangeException("xfs-like clone: the source's partial EOF block cannot go into the "
                    + "middle of the target (it would end at " + (dstOffset + length) + ", before the target's EOF "
                    + target.size() + ")");
        }
        if (source.ino() == target.ino() && Math.abs(srcOffset - dstOffset) < blocks * blockSize) {
            throw new InvalidRangeException("xfs-like clone: ranges of one file overlap");
        }
        InodeState from = volume.fileForIo(source.ino());
        InodeState to = volume.fileForIo(target.ino());
        InodeState firstLock = from.ino <= to.ino ? from : to;
        InodeState secondLock = from.ino <= to.ino ? to : from;
        change(() -> {
            volume.ensureAvailable(8);
            firstLock.lock.lock();
            secondLock.lock.lock();
            try {
                long targetBlock = dstOffset / blockSize;
                space.punch(to, to.data, targetBlock, blocks);
                space.punch(to, to.cow, targetBlock, blocks);
                space.share(from, srcOffset / blockSize, to, targetBlock, blocks);
                to.diskSize = Math.max(to.diskSize, dstOffset + length);
                to.modified(Instant.now());
            } finally {
                secondLock.lock.unlock();
                firstLock.lock.unlock();
            }
            return 0L;
        });
    }

    @Override
    public void fsync(IomapInode inode, boolean dataOnly) throws IOException {
        if (dataOnly && volume.log.nothingForData()) {
            // XFS's fdatasync finds no log sequence to force; here: no metadata lock either.
            volume.checkMounted();
            return;
        }
        volume.metaLock.lock();
        try {
            volume.checkMounted();
            if (dataOnly) {
                volume.log.commitForData();
            } else {
                volume.log.commit();
            }
        } finally {
            volume.metaLock.unlock();
        }
    }

    /** {@code xfs_release}'s {@code xfs_free_eofblocks}: the speculative preallocation goes with the last close. */
    @Override
    public void release(IomapInode inode) throws IOException {
        // in memory only, so also after a shutdown: closing a file must not fail then
        InodeState state = volume.inodes.get(inode.ino());
        if (state == null) {
            return;
        }
        state.lock.lock();
        try {
            state.protectedEnd = inode.size();
            iomapOps.trimPreallocation(state);
        } finally {
            state.lock.unlock();
        }
    }

    @Override
    public void evict(long ino) throws IOException {
        change(() -> {
            InodeState inode = volume.inodes.get(ino);
            if (inode != null && inode.nlink == 0) {
                namespace.freeInode(inode);
            }
            return 0L;
        });
    }

    @Override
    public void sync() throws IOException {
        volume.metaLock.lock();
        try {
            volume.checkMounted();
            volume.log.commit();
        } finally {
            volume.metaLock.unlock();
        }
    }

    @Override
    public void unmount() throws IOException {
        volume.metaLock.lock();
        try {
            if (volume.isUnmounted()) {
                return;
            }
            if (volume.isShutDown()) {
                volume.markUnmounted();
                volume.checkNotShutDown();
            }
            for (InodeState inode : List.copyOf(volume.inodes.values())) {
                if (inode.nlink == 0) {
                    namespace.freeInode(inode);
                    continue;
                }
                inode.lock.lock();
                try {
                    releaseDelalloc(inode, inode.data);
                    space.punch(inode, inode.cow, 0, ExtentMap.END);
                } finally {
                    inode.lock.unlock();
                }
            }
            volume.log.checkpoint();
            volume.superblock.withClean(true).write(volume.device);
            volume.device.flush();
            volume.markUnmounted();
        } finally {
            volume.metaLock.unlock();
        }
    }

    private void releaseDelalloc(InodeState inode, ExtentMap fork) throws InvalidRangeException {
        for (Extent extent : fork.extents()) {
            if (extent.state() == ExtentState.DELALLOC) {
                space.punch(inode, fork, extent.fileBlock(), extent.length());
            }
        }
    }

    /** @return the in-memory state, for tests */
    XfsVolume volume() {
        return volume;
    }

    /** Space and inode counters, for tests: free, reserved. */
    long[] spaceCounters() {
        return new long[] {volume.space.free(), volume.space.reserved(), volume.allocator.freeBlocks()};
    }

    /** A read of metadata: under the metadata lock, on a filesystem that has not shut down. */
    private <T> T read(MetadataRead<T> body) throws IOException {
        volume.checkNotShutDown();
        volume.metaLock.lock();
        try {
            return body.run();
        } finally {
            volume.metaLock.unlock();
        }
    }

    @FunctionalInterface
    private interface MetadataRead<T> {
        T run() throws IOException;
    }

    /** One metadata change: under the metadata lock, on a mounted filesystem, ending with a commit check. */
    private long change(MetadataChange body) throws IOException {
        volume.metaLock.lock();
        try {
            volume.checkMounted();
            long result = body.run();
            volume.checkNotShutDown();
            volume.log.commitIfLarge();
            return result;
        } finally {
            volume.metaLock.unlock();
        }
    }

    @FunctionalInterface
    private interface MetadataChange {
        long run() throws IOException;
    }
}
