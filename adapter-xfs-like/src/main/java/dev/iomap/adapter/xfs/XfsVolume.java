package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentMap;
import dev.iomap.adapter.support.Journal;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapException;
import dev.iomap.api.NoSpaceException;
import java.nio.file.NoSuchFileException;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Everything one mount holds in memory: the geometry, the journal, the inodes, the allocation groups,
 * the space account and the running transaction.
 *
 * <p><b>Locking.</b> {@link #metaLock} serialises every change of persisted metadata (namespace, extents
 * on the device, allocation, reference counts) and every commit; it is held across journal I/O but
 * never while waiting for data I/O. Inode locks ({@link InodeState#lock}) are taken after it. Writers
 * reserving delayed allocations take only the inode lock and the {@link SpaceAccount}'s own lock.
 * {@link #inodes} is concurrent so that those writers can find their inode without the metadata lock.
 */
final class XfsVolume {
    final BlockDevice device;
    final XfsGeometry geometry;
    /** The superblock as the device holds it; replaced, under {@link #metaLock}, by a label change. */
    volatile XfsSuperblock superblock;
    final Journal journal;
    final ReentrantLock metaLock = new ReentrantLock();
    final Map<Long, InodeState> inodes = new ConcurrentHashMap<>();
    /** Inode slots in use; guarded by {@link #metaLock}. */
    final BitSet usedInodes = new BitSet();
    /**
     * Inode table blocks {@code [0, this)} are written on the device (or in the running transaction);
     * the others have never been, and hold free slots. Guarded by {@link #metaLock}.
     */
    long initialisedTableBlocks;
    /** Inodes with a data-fork extent flagged shared; guarded by {@link #metaLock}. */
    final java.util.Set<Long> sharingInodes = new java.util.HashSet<>();
    /** Directory entries naming each inode, to refuse a new inode number that a name points at. */
    private final Map<Long, Integer> names = new java.util.HashMap<>();
    final BlockAllocator allocator;
    final SpaceAccount space;
    final MetadataLog log;
    /** The blocks inodes reference, for the check of each allocation; guarded by {@link #metaLock}. */
    final ReferencedBlocks referenced = new ReferencedBlocks();
    private volatile boolean unmounted;
    /** Why the filesystem shut down, or null while it runs. */
    private volatile String shutdownReason;

    XfsVolume(BlockDevice device, XfsSuperblock superblock, Journal journal, BlockAllocator allocator) {
        this.device = device;
        this.geometry = superblock.geometry();
        this.superblock = superblock;
        this.journal = journal;
        this.allocator = allocator;
        this.space = new SpaceAccount(allocator.freeBlocks(), geometry.metadataSetAside());
        this.log = new MetadataLog(this);
        allocator.onCorruption(this::shutdown);
        allocator.onFree(referenced::remove);
    }

    /** @return the inode, which must exist */
    InodeState inode(long ino) throws NoSuchFileException {
        InodeState state = inodes.get(ino);
        if (state == null) {
            throw new NoSuchFileException("xfs-like inode " + ino);
        }
        return state;
    }

    /** @return a regular file's inode, for the core's I/O callbacks */
    InodeState fileForIo(long ino) throws IomapException {
        InodeState state = inodes.get(ino);
        if (state == null || state.type != FileType.REGULAR) {
            throw new IomapException("xfs-like: inode " + ino + " is not a regular file of this mount");
        }
        return state;
    }

    /**
     * The lowest free inode number. If its table block was never written, it and every block before it
     * not yet written join the running transaction (initialised to free slots), with block 0, which
     * counts them.
     *
     * @return the inode number
     * @throws FileSystemShutdownException if a directory entry already names it (the filesystem shuts down)
     */
    long allocateInodeNumber() throws IomapException {
        long ino = usedInodes.nextClearBit(2);
        if (ino >= geometry.inodeCount()) {
            throw new NoSpaceException("xfs-like: all " + (geometry.inodeCount() - 1) + " inodes are in use");
        }
        if (names.containsKey(ino)) {
            throw shutdown("free inode " + ino + " (inode table " + XfsLayout.where(geometry.inodeBlock(ino),
                    geometry.blockSize()) + ") is still named by a directory entry");
        }
        long tableIndex = ino / geometry.inodesPerBlock();
        if (tableIndex >= initialisedTableBlocks) {
            log.tableBlocksInitialised(initialisedTableBlocks, tableIndex + 1);
            initialisedTableBlocks = tableIndex + 1;
        }
        return ino;
    }

    /** A directory entry naming {@code ino} was added. */
    void nameAdded(long ino) {
        names.merge(ino, 1, Integer::sum);
    }

    /** A directory entry naming {@code ino} was removed. */
    void nameRemoved(long ino) {
        names.computeIfPresent(ino, (key, count) -> count == 1 ? null : count - 1);
    }

    /**
     * Makes sure {@code blocks} can be handed out now, committing (and checkpointing) first if freed
     * blocks are waiting for that. Call before changing anything in an operation, since a commit writes
     * whole operations only.
     */
    void ensureAvailable(long blocks) throws java.io.IOException {
        long wanted = blocks + 8;
        if (allocator.availableBlocks() >= wanted || !allocator.hasBusy()) {
            return;
        }
        log.commit();
        if (allocator.availableBlocks() < wanted && allocator.hasBusyMetadata()) {
            log.checkpoint();
        }
    }

    /**
     * Hands out blocks (see {@link BlockAllocator#allocate}) after checking that nothing references
     * them: no extent of either fork of any inode, no extent-list block, no static metadata. Blocks that
     * are free on the device yet referenced mean the free space disagrees with the extents: the
     * filesystem shuts down before anything is written into them. {@link #referenced} answers first, in
     * O(log runs); only blocks it holds are looked up in every inode, to name the holder (or, if none
     * holds them, to drop the stale run).
     *
     * @throws FileSystemShutdownException if the blocks are referenced (they stay allocated, unused)
     */
    BlockRange allocate(long want, long near) throws IomapException {
        checkMounted();
        BlockRange range = allocator.allocate(want, near);
        String owner = staticMetadata(range);
        if (owner == null && referenced.intersects(range.start(), range.end())) {
            owner = referenceTo(range);
            if (owner == null) {
                // A run left behind by a free that bypassed the allocator: nothing references the blocks.
                referenced.remove(range.start(), range.length());
            }
        }
        if (owner != null) {
            throw shutdown("the free space of allocation group " + geometry.agOf(range.start()) + " handed out blocks "
                    + range + " (device offset " + range.start() * geometry.blockSize() + "), which " + owner
                    + " still references");
        }
        referenced.add(range.start(), range.length());
        return range;
    }

    /**
     * Records what a loaded inode references (allocated extents of both forks, extent-list blocks,
     * symlink and attribute chains) in {@link #referenced}; at mount, before anything is allocated.
     */
    void referencesLoaded(InodeState inode) {
        for (ExtentMap fork : List.of(inode.data, inode.cow)) {
            for (Extent extent : fork.extents()) {
                if (extent.state().hasDeviceBlocks()) {
                    referenced.add(extent.deviceBlock(), extent.length());
                }
            }
        }
        for (List<Long> blocks : List.of(inode.listBlocks, inode.targetBlocks, inode.xattrBlocks)) {
            for (long block : blocks) {
                referenced.add(block, 1);
            }
        }
    }

    /** @return what static metadata {@code range} overlaps, or null if none */
    private String staticMetadata(BlockRange range) {
        if (range.start() < geometry.dataStart() || range.end() > geometry.totalBlocks()
                || range.start() < allocator.group(geometry.agOf(range.start())).firstDataBlock()) {
            return "static metadata (superblock, journal, inode table or a group header or leaf)";
        }
        return null;
    }

    /**
     * Gives a journalled chain (a symbolic link's target blocks, at most 5 at 1 KiB) {@code needed}
     * blocks: frees those past it or allocates the missing ones. All or nothing: on failure the chain is
     * as it was. Extended-attribute chains are written out of the journal instead ({@link AttributeOps}).
     *
     * @param chain the blocks, in order; changed in place
     * @param needed how many it must have
     * @param what the chain, for messages
     * @throws NoSpaceException if the blocks are not there, or one transaction of the journal cannot take them
     */
    void resizeChain(List<Long> chain, int needed, String what) throws java.io.IOException {
        long limit = journal.maxTransactionBlocks() / 2 - 16;
        if (needed > limit) {
            throw new NoSpaceException("xfs-like: " + what + " needs " + needed + " blocks, more than one transaction "
                    + "of this filesystem's journal takes (" + limit + "); format with a larger journalblocks");
        }
        int missing = needed - chain.size();
        if (missing > 0) {
            ensureAvailable(missing);
            space.take(missing, true);
            List<Long> added = new java.util.ArrayList<>();
            try {
                while (added.size() < missing) {
                    long near = chain.isEmpty() && added.isEmpty() ? -1
                            : (added.isEmpty() ? chain.getLast() : added.getLast()) + 1;
                    BlockRange range = allocate(missing - added.size(), near);
                    for (long block = range.start(); block < range.end(); block++) {
                        added.add(block);
                    }
                }
            } catch (java.io.IOException e) {
                for (long block : added) {
                    allocator.free(block, 1, true);
                }
                space.release(missing);
                throw e;
            }
            chain.addAll(added);
        }
        while (chain.size() > needed) {
            allocator.free(chain.removeLast(), 1, true);
            space.release(1);
        }
    }

    /**
     * An extent about to be handed to I/O must lie in the data area: else the filesystem shuts down.
     *
     * @throws FileSystemShutdownException if it does not
     */
    void checkInDataArea(InodeState inode, Extent extent) throws FileSystemShutdownException {
        if (!extent.state().hasDeviceBlocks()) {
            return;
        }
        long end = extent.deviceBlock() + extent.length();
        if (extent.deviceBlock() < geometry.dataStart() || end > geometry.totalBlocks() || end < extent.deviceBlock()) {
            throw shutdown(inode + " extent " + extent + " points outside the data area [" + geometry.dataStart()
                    + ", " + geometry.totalBlocks() + ")");
        }
    }

    /**
     * @return which inode references a block of {@code range} (a walk over every inode), or null if none
     *     does; caller holds the metadata lock
     */
    private String referenceTo(BlockRange range) {
        for (InodeState inode : inodes.values()) {
            for (long block : inode.listBlocks) {
                if (range.contains(block)) {
                    return "the extent list of " + inode + " at block " + block;
                }
            }
            for (List<Long> chain : List.of(inode.targetBlocks, inode.xattrBlocks)) {
                for (long block : chain) {
                    if (range.contains(block)) {
                        return "a symlink or extended-attribute block of " + inode + " at block " + block;
                    }
                }
            }
            if (!inode.mayReference(range.start(), range.end())) {
                continue;
            }
            inode.lock.lock();
            try {
                for (ExtentMap fork : List.of(inode.data, inode.cow)) {
                    for (Extent extent : fork.extents()) {
                        if (extent.state().hasDeviceBlocks() && extent.deviceBlock() < range.end()
                                && range.start() < extent.deviceBlock() + extent.length()) {
                            return inode + " " + (fork == inode.data ? "data" : "COW") + " fork extent " + extent;
                        }
                    }
                }
            } finally {
                inode.lock.unlock();
            }
        }
        return null;
    }

    void checkMounted() throws IomapException {
        checkNotShutDown();
        if (unmounted) {
            throw new IomapException("xfs-like: the filesystem was unmounted");
        }
    }

    /**
     * Shuts the filesystem down (XFS's {@code xfs_force_shutdown}): metadata was found inconsistent
     * before anything was written on top of it. From now on every operation fails with
     * {@link FileSystemShutdownException}, nothing more is written to the device (no commit, no
     * checkpoint, no clean superblock) and unmount leaves the image marked unclean. The first reason
     * is kept.
     *
     * @param reason what was inconsistent and where, one line
     * @return the exception to throw
     */
    FileSystemShutdownException shutdown(String reason) {
        synchronized (this) {
            if (shutdownReason == null) {
                shutdownReason = reason;
            }
        }
        return new FileSystemShutdownException(shutdownMessage(shutdownReason));
    }

    /** @throws FileSystemShutdownException if the filesystem has shut down */
    void checkNotShutDown() throws FileSystemShutdownException {
        String reason = shutdownReason;
        if (reason != null) {
            throw new FileSystemShutdownException(shutdownMessage(reason));
        }
    }

    boolean isShutDown() {
        return shutdownReason != null;
    }

    private static String shutdownMessage(String reason) {
        return "xfs-like: the filesystem shut down, the image is left unclean (unmount and run fsck): " + reason;
    }

    void markUnmounted() {
        unmounted = true;
    }

    boolean isUnmounted() {
        return unmounted;
    }
}
