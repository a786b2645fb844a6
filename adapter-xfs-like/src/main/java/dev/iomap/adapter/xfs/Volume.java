package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.Journal;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapException;
import dev.iomap.api.NoSpaceException;
import java.nio.file.NoSuchFileException;
import java.util.BitSet;
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
final class Volume {
    final BlockDevice device;
    final Geometry geometry;
    final Superblock superblock;
    final Journal journal;
    final ReentrantLock metaLock = new ReentrantLock();
    final Map<Long, InodeState> inodes = new ConcurrentHashMap<>();
    /** Inode slots in use; guarded by {@link #metaLock}. */
    final BitSet usedInodes = new BitSet();
    /** Inodes with a data-fork extent flagged shared; guarded by {@link #metaLock}. */
    final java.util.Set<Long> sharingInodes = new java.util.HashSet<>();
    final BlockAllocator allocator;
    final SpaceAccount space;
    final MetadataLog log;
    private volatile boolean unmounted;

    Volume(BlockDevice device, Superblock superblock, Journal journal, BlockAllocator allocator,
            Map<Long, java.nio.ByteBuffer> agPayloads) {
        this.device = device;
        this.geometry = superblock.geometry();
        this.superblock = superblock;
        this.journal = journal;
        this.allocator = allocator;
        this.space = new SpaceAccount(allocator.freeBlocks(), geometry.metadataSetAside());
        this.log = new MetadataLog(this, agPayloads);
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

    /** @return the lowest free inode number */
    long allocateInodeNumber() throws NoSpaceException {
        long ino = usedInodes.nextClearBit(2);
        if (ino >= geometry.inodeCount()) {
            throw new NoSpaceException("xfs-like: all " + (geometry.inodeCount() - 1) + " inodes are in use");
        }
        return ino;
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

    void checkMounted() throws IomapException {
        if (unmounted) {
            throw new IomapException("xfs-like: the filesystem was unmounted");
        }
    }

    void markUnmounted() {
        unmounted = true;
    }

    boolean isUnmounted() {
        return unmounted;
    }
}
