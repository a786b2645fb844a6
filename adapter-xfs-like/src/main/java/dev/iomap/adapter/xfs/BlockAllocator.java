package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.IomapException;
import dev.iomap.api.NoSpaceException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;
import java.util.function.Function;

/**
 * The allocation groups of a mount: allocation near a hint, frees into busy lists, and reference counts.
 * Block accounting ({@link SpaceAccount}) is the caller's: this class only finds and returns blocks.
 *
 * <p><b>Busy extents.</b> A freed data block is not handed out again until the transaction that freed
 * it is on the device (else a crash could give it back to its old owner after new data overwrote it).
 * A freed metadata block (directory or extent-list block) waits longer, until a checkpoint: until then
 * the journal may still write an old image of it home, over whatever data it would hold.
 *
 * <p>Not thread-safe: used under the mount's metadata lock.
 */
final class BlockAllocator {
    private final XfsGeometry geometry;
    private final AllocationGroup[] groups;
    private final BitSet dirty = new BitSet();
    /** Mirrors {@code !dirty.isEmpty()} for readers without the metadata lock. */
    private volatile boolean changedSinceCommit;
    private final List<BlockRange> busyData = new ArrayList<>();
    private final List<BusyMetadata> busyMetadata = new ArrayList<>();
    private long changes;
    /** Shuts the filesystem down with a reason; until a mount sets it, inconsistencies throw. */
    private Function<String, ? extends IomapException> corruption = reason -> {
        throw new IllegalStateException(reason);
    };

    /** A freed metadata block range and the commit that made its free durable (-1: not yet). */
    private static final class BusyMetadata {
        final BlockRange range;
        long commit = -1;

        BusyMetadata(BlockRange range) {
            this.range = range;
        }
    }

    BlockAllocator(XfsGeometry geometry, AllocationGroup[] groups) {
        this.geometry = geometry;
        this.groups = groups;
    }

    /** Told of blocks as {@link #free} frees them. */
    @FunctionalInterface
    interface FreeListener {
        /** {@code [start, start + length)} were freed. */
        void freed(long start, long length);
    }

    private FreeListener freeListener = (start, length) -> { };

    /** Who is told of each free: the mount's {@link ReferencedBlocks}. */
    void onFree(FreeListener listener) {
        this.freeListener = listener;
    }

    /** Where an inconsistency found while allocating or freeing goes: the mount's shutdown. */
    void onCorruption(Function<String, ? extends IomapException> shutdown) {
        this.corruption = shutdown;
    }

    AllocationGroup group(int agno) {
        return groups[agno];
    }

    /** @return blocks free on the device once the running transaction commits, busy ones included */
    long freeBlocks() {
        long free = 0;
        for (AllocationGroup group : groups) {
            free += group.onDisk().freeBlocks();
        }
        return free;
    }

    /** @return blocks that can be handed out now */
    long availableBlocks() {
        long free = 0;
        for (AllocationGroup group : groups) {
            free += group.available().freeBlocks();
        }
        return free;
    }

    /** @return whether freed blocks wait for a commit or a checkpoint */
    boolean hasBusy() {
        return !busyData.isEmpty() || !busyMetadata.isEmpty();
    }

    /** @return whether freed metadata blocks wait for a checkpoint */
    boolean hasBusyMetadata() {
        return !busyMetadata.isEmpty();
    }

    /**
     * Finds up to {@code want} contiguous blocks, near {@code near} if that is a data block.
     *
     * @return the blocks, at least one
     * @throws NoSpaceException if no group has a free block that is not busy
     * @throws IomapException if what is free now is not free on the device (the filesystem shuts down)
     */
    BlockRange allocate(long want, long near) throws IomapException {
        int first = near >= geometry.dataStart() && near < geometry.totalBlocks() ? geometry.agOf(near) : 0;
        for (int i = 0; i < groups.length; i++) {
            AllocationGroup group = groups[(first + i) % groups.length];
            if (group.available().freeBlocks() == 0) {
                continue;
            }
            long hint = i == 0 && near >= 0 ? near : group.firstDataBlock();
            try {
                BlockRange range = group.available().allocate(want, hint, 1);
                group.allocateOnDisk(range.start(), range.length());
                changed(group.agno(), 2);
                return range;
            } catch (NoSpaceException e) {
                // Try the next group.
            } catch (IomapException e) {
                throw corruption.apply("blocks available in " + group + " are not free on the device: "
                        + e.getMessage());
            }
        }
        throw new NoSpaceException("xfs-like: no free block that is not busy (" + availableBlocks()
                + " available, " + freeBlocks() + " free)");
    }

    /**
     * Frees blocks: free on the device at the next commit, handed out again once that is durable.
     * Freeing blocks that are free already, static metadata, or outside one group's data blocks is an
     * inconsistency: the filesystem shuts down and nothing is freed (the running transaction will
     * never commit).
     *
     * @param metadata whether they held metadata (then they wait for a checkpoint)
     */
    void free(long start, long length, boolean metadata) {
        BlockRange range = new BlockRange(start, length);
        if (start < geometry.dataStart() || length < 1 || start + length > geometry.totalBlocks()
                || start < groups[geometry.agOf(start)].firstDataBlock()
                || geometry.agOf(start) != geometry.agOf(start + length - 1)) {
            var _ = corruption.apply("freeing blocks " + range
                    + " that are not data blocks of one allocation group");
            return;
        }
        int agno = geometry.agOf(start);
        try {
            groups[agno].freeOnDisk(start, length);
        } catch (IomapException e) {
            var _ = corruption.apply("freeing blocks " + range + " (device offset " + start * geometry.blockSize()
                    + ") of which some are free already: " + e.getMessage());
            return;
        }
        freeListener.freed(start, length);
        if (metadata) {
            busyMetadata.add(new BusyMetadata(range));
        } else {
            busyData.add(range);
        }
        changed(agno, 3);
    }

    /** Adds an owner to shared blocks. */
    void incrementRefcount(long start, long length) {
        int agno = geometry.agOf(start);
        groups[agno].incrementRefcount(start, length);
        changed(agno, 2);
    }

    /**
     * Removes an owner; the caller frees what has none left. A count that would go below 0 is an
     * inconsistency: the filesystem shuts down and nothing changes (nothing to free).
     */
    RefcountMap.Change decrementRefcount(long start, long length) {
        int agno = geometry.agOf(start);
        RefcountMap.Change change;
        try {
            change = groups[agno].decrementRefcount(start, length);
        } catch (CorruptFileSystemException e) {
            var _ = corruption.apply("freeing blocks " + new BlockRange(start, length) + " (device offset "
                    + start * geometry.blockSize() + "): " + e.getMessage());
            return new RefcountMap.Change(List.of(), List.of());
        }
        changed(agno, 2);
        return change;
    }

    /** @return whether any block of the range has two or more owners */
    boolean isShared(long start, long length) {
        return !groups[geometry.agOf(start)].refcounts().recordsIn(start, start + length).isEmpty();
    }

    /**
     * The running transaction {@code commit} is durable.
     *
     * @param forcedCheckpoint whether the journal checkpointed every earlier commit while committing it
     */
    void committed(long commit, boolean forcedCheckpoint) {
        for (BlockRange range : busyData) {
            makeAvailable(range);
        }
        busyData.clear();
        if (forcedCheckpoint) {
            releaseMetadata(commit - 1);
        }
        for (BusyMetadata busy : busyMetadata) {
            if (busy.commit < 0) {
                busy.commit = commit;
            }
        }
    }

    /** Every commit up to {@code commit} is checkpointed: freed metadata blocks may be reused. */
    void checkpointed(long commit) {
        releaseMetadata(commit);
    }

    private void releaseMetadata(long upToCommit) {
        for (Iterator<BusyMetadata> it = busyMetadata.iterator(); it.hasNext();) {
            BusyMetadata busy = it.next();
            if (busy.commit >= 0 && busy.commit <= upToCommit) {
                makeAvailable(busy.range);
                it.remove();
            }
        }
    }

    private void makeAvailable(BlockRange range) {
        try {
            groups[geometry.agOf(range.start())].available().free(range.start(), range.length());
        } catch (IomapException e) {
            throw new IllegalStateException("busy extent " + range + " was already available", e);
        }
    }

    /** @return whether a group changed since {@link #clearDirty()}, without copying the set */
    boolean hasDirtyGroups() {
        return !dirty.isEmpty();
    }

    /**
     * {@link #hasDirtyGroups()} readable without the metadata lock: set before a change is recorded,
     * cleared by {@link #clearDirty()}, which a commit calls once its changes are durable.
     *
     * @return whether a group may have changed since the last commit
     */
    boolean changedSinceCommit() {
        return changedSinceCommit;
    }

    /** @return the groups changed since {@link #clearDirty()} */
    BitSet dirtyGroups() {
        return (BitSet) dirty.clone();
    }

    /** The changes so far are on the device: a commit wrote them. */
    void clearDirty() {
        for (int agno = dirty.nextSetBit(0); agno >= 0; agno = dirty.nextSetBit(agno + 1)) {
            groups[agno].clearChanged();
        }
        dirty.clear();
        changes = 0;
        changedSinceCommit = false;
    }

    /** @return a rough count of metadata blocks the changes since {@link #clearDirty()} touched */
    long changeEstimate() {
        return changes;
    }

    private void changed(int agno, int blocks) {
        if (!changedSinceCommit) {
            changedSinceCommit = true;
        }
        dirty.set(agno);
        changes += blocks;
    }
}
