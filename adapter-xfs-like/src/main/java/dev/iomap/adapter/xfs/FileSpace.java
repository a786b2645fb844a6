package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockMapping;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentMap;
import dev.iomap.adapter.support.ExtentState;
import dev.iomap.adapter.support.Hole;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapException;
import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Changes to the blocks behind a file's forks: allocation, freeing with reference counts, delayed
 * allocation conversion, unwritten conversion, copy-on-write remapping and cloning. Every method needs
 * the metadata lock and the lock of every inode it is given; it records what it changed in the running
 * transaction and bumps the validity cookie of the forks it changed.
 */
final class FileSpace {
    private final XfsVolume volume;

    FileSpace(XfsVolume volume) {
        this.volume = volume;
    }

    /**
     * Removes {@code [fileBlock, fileBlock + blocks)} from a fork: delayed allocations are unreserved,
     * blocks lose one owner (and are freed at none).
     *
     * @return whether anything was removed
     */
    boolean punch(InodeState inode, ExtentMap fork, long fileBlock, long blocks) throws InvalidRangeException {
        List<Extent> removed = fork.punch(fileBlock, blocks);
        boolean persisted = false;
        for (Extent extent : removed) {
            if (extent.state() == ExtentState.DELALLOC) {
                volume.space.unreserve(extent.length());
            } else {
                releaseBlocks(extent.deviceBlock(), extent.length(), fork == inode.data);
                persisted = true;
            }
        }
        if (!removed.isEmpty()) {
            inode.changed();
        }
        if (persisted) {
            volume.log.inodeChanged(inode);
        }
        return !removed.isEmpty();
    }

    /** Removes every extent of both forks past {@code fromBlock}. */
    void punchFrom(InodeState inode, long fromBlock) throws InvalidRangeException {
        punch(inode, inode.data, fromBlock, ExtentMap.END - fromBlock);
        punch(inode, inode.cow, fromBlock, ExtentMap.END - fromBlock);
    }

    /**
     * Drops one owner of blocks: a data-fork extent's blocks go by their reference count; COW staging
     * blocks, never shared, are freed.
     */
    void releaseBlocks(long deviceBlock, long length, boolean dataFork) {
        if (!dataFork) {
            freeData(deviceBlock, length);
            return;
        }
        RefcountMap.Change change = volume.allocator.decrementRefcount(deviceBlock, length);
        for (BlockRange free : change.nowFree()) {
            freeData(free.start(), free.length());
        }
        for (BlockRange single : change.nowSingle()) {
            clearShared(single);
        }
    }

    private void freeData(long start, long length) {
        volume.allocator.free(start, length, false);
        volume.space.release(length);
    }

    /** The blocks have one owner left: its extents over them are no longer shared. */
    private void clearShared(BlockRange range) {
        for (Long ino : List.copyOf(volume.sharingInodes)) {
            InodeState owner = volume.inodes.get(ino);
            if (owner == null) {
                volume.sharingInodes.remove(ino);
                continue;
            }
            owner.lock.lock();
            try {
                for (Extent extent : owner.data.extents()) {
                    if (!extent.shared() || !extent.state().hasDeviceBlocks()) {
                        continue;
                    }
                    long from = Math.max(range.start(), extent.deviceBlock());
                    long to = Math.min(range.end(), extent.deviceBlock() + extent.length());
                    if (from < to) {
                        long fileFrom = extent.fileBlock() + (from - extent.deviceBlock());
                        owner.data.replace(extent.slice(fileFrom, fileFrom + (to - from)).withShared(false));
                        owner.changed();
                        volume.log.inodeChanged(owner);
                    }
                }
                if (!owner.hasShared()) {
                    volume.sharingInodes.remove(ino);
                }
            } finally {
                owner.lock.unlock();
            }
        }
    }

    /**
     * Gives a delayed allocation its blocks (as many contiguous ones as there are, at least one), stored
     * unwritten until the I/O completes.
     *
     * @param delalloc the part of a delalloc extent of {@code fork} to allocate
     * @return the allocated extent
     */
    Extent allocateDelalloc(InodeState inode, ExtentMap fork, Extent delalloc) throws IomapException {
        BlockRange blocks = volume.allocate(delalloc.length(), nearHint(inode, fork, delalloc.fileBlock()));
        volume.space.reservedAllocated(blocks.length());
        Extent allocated = Extent.unwritten(delalloc.fileBlock(), blocks.length(), blocks.start());
        fork.replace(allocated);
        inode.changed();
        volume.log.inodeChanged(inode);
        return allocated;
    }

    /**
     * Allocates blocks that were not reserved for {@code [fileBlock, fileBlock + blocks)} of a fork, which
     * must be a hole there, as one unwritten extent of as many contiguous blocks as there are.
     *
     * @return the extent allocated
     * @throws NoSpaceException if the space account refuses (nothing is allocated then)
     */
    Extent allocateUnwritten(InodeState inode, ExtentMap fork, long fileBlock, long blocks) throws IOException {
        volume.space.take(blocks, false);
        BlockRange range;
        try {
            range = volume.allocate(blocks, nearHint(inode, fork, fileBlock));
        } catch (IomapException e) {
            volume.space.release(blocks);
            throw e;
        }
        volume.space.release(blocks - range.length());
        return insertUnwritten(inode, fork, fileBlock, range);
    }

    /**
     * Allocates unwritten extents over every hole of {@code [fileBlock, fileBlock + blocks)} of the data
     * fork, taking the blocks from the space account first: all of them or none.
     *
     * @param taken whether the caller already took the blocks from the space account
     * @throws NoSpaceException if there are not enough blocks (nothing is changed then)
     */
    void fillHoles(InodeState inode, long fileBlock, long blocks, boolean taken) throws IOException {
        long holes = holeBlocks(inode, fileBlock, blocks);
        if (holes == 0) {
            return;
        }
        if (!taken) {
            volume.space.take(holes, false);
        }
        long done = 0;
        try {
            for (BlockMapping mapping : inode.data.mappings(fileBlock, blocks)) {
                if (!(mapping instanceof Hole hole)) {
                    continue;
                }
                for (long at = hole.fileBlock(); at < hole.endBlock();) {
                    BlockRange range = volume.allocate(hole.endBlock() - at, nearHint(inode, inode.data, at));
                    insertUnwritten(inode, inode.data, at, range);
                    at += range.length();
                    done += range.length();
                }
            }
        } finally {
            volume.space.release(holes - done);
        }
    }

    private Extent insertUnwritten(InodeState inode, ExtentMap fork, long fileBlock, BlockRange range)
            throws InvalidRangeException {
        Extent extent = Extent.unwritten(fileBlock, range.length(), range.start());
        fork.insert(extent);
        inode.changed();
        volume.log.inodeChanged(inode);
        return extent;
    }

    /**
     * Makes {@code [first, first + blocks)} read as zeroes and stay allocated: private written extents
     * become unwritten in place, shared ones and delayed allocations are punched, and every hole gets
     * unwritten blocks. Space is checked before anything persistent changes.
     */
    void zeroRange(InodeState state, long first, long blocks) throws IOException {
        long shared = 0;
        for (Extent extent : state.data.extents(first, blocks)) {
            if (extent.state() == ExtentState.DELALLOC) {
                punch(state, state.data, extent.fileBlock(), extent.length());
            } else if (extent.shared()) {
                shared += extent.length();
            }
        }
        long needed = holeBlocks(state, first, blocks) + shared;
        volume.ensureAvailable(needed);
        volume.space.take(needed, false);
        punch(state, state.cow, first, blocks);
        for (Extent extent : state.data.extents(first, blocks)) {
            if (extent.shared()) {
                punch(state, state.data, extent.fileBlock(), extent.length());
            } else if (extent.state() == ExtentState.WRITTEN) {
                state.data.replace(extent.withState(ExtentState.UNWRITTEN));
                state.changed();
            }
        }
        fillHoles(state, first, blocks, true);
    }

    /** @return blocks of {@code [fileBlock, fileBlock + blocks)} of the data fork that are holes */
    static long holeBlocks(InodeState inode, long fileBlock, long blocks) throws InvalidRangeException {
        long holes = 0;
        for (BlockMapping mapping : inode.data.mappings(fileBlock, blocks)) {
            if (mapping instanceof Hole hole) {
                holes += hole.length();
            }
        }
        return holes;
    }

    /** The written range {@code [fileBlock, +blocks)} at {@code deviceBlock} of the data fork is now written. */
    void convertUnwritten(InodeState inode, long fileBlock, long blocks, long deviceBlock)
            throws InvalidRangeException {
        for (Extent extent : inode.data.extents(fileBlock, blocks)) {
            if (extent.state() == ExtentState.UNWRITTEN
                    && extent.deviceBlock() == deviceBlock + (extent.fileBlock() - fileBlock)) {
                inode.data.replace(extent.withState(ExtentState.WRITTEN));
                inode.changed();
                volume.log.inodeChanged(inode);
            }
        }
    }

    /**
     * Copy-on-write completion: the COW staging extents written at {@code deviceBlock} replace the data
     * fork's blocks over the range, whose old blocks lose an owner.
     */
    void remapCow(InodeState inode, long fileBlock, long blocks, long deviceBlock) throws InvalidRangeException {
        for (Extent staged : inode.cow.extents(fileBlock, blocks)) {
            if (staged.state() == ExtentState.DELALLOC
                    || staged.deviceBlock() != deviceBlock + (staged.fileBlock() - fileBlock)) {
                continue;
            }
            inode.cow.punch(staged.fileBlock(), staged.length());
            List<Extent> old = inode.data.punch(staged.fileBlock(), staged.length());
            inode.data.insert(Extent.written(staged.fileBlock(), staged.length(), staged.deviceBlock()));
            for (Extent extent : old) {
                if (extent.state() == ExtentState.DELALLOC) {
                    volume.space.unreserve(extent.length());
                } else {
                    releaseBlocks(extent.deviceBlock(), extent.length(), true);
                }
            }
            inode.changed();
            volume.log.inodeChanged(inode);
        }
    }

    /**
     * Shares the written blocks of {@code source}'s {@code [sourceBlock, +blocks)} with {@code target} at
     * {@code targetBlock}, whose range must be a hole. Unwritten and delayed extents are not shared (the
     * target reads zeroes there, as the source does).
     */
    void share(InodeState source, long sourceBlock, InodeState target, long targetBlock, long blocks)
            throws InvalidRangeException {
        List<Extent> pieces = new ArrayList<>(source.data.extents(sourceBlock, blocks));
        for (Extent piece : pieces) {
            if (piece.state() != ExtentState.WRITTEN) {
                continue;
            }
            volume.allocator.incrementRefcount(piece.deviceBlock(), piece.length());
            if (!piece.shared()) {
                source.data.replace(piece.withShared(true));
            }
            target.data.insert(new Extent(targetBlock + (piece.fileBlock() - sourceBlock), piece.length(),
                    piece.deviceBlock(), ExtentState.WRITTEN, true));
        }
        if (!pieces.isEmpty()) {
            volume.sharingInodes.add(source.ino);
            volume.sharingInodes.add(target.ino);
        }
        source.changed();
        target.changed();
        volume.log.inodeChanged(source);
        volume.log.inodeChanged(target);
    }

    /** @return where blocks for {@code fileBlock} are best allocated: after the previous extent's blocks */
    long nearHint(InodeState inode, ExtentMap fork, long fileBlock) {
        for (ExtentMap map : List.of(fork, inode.data)) {
            if (fileBlock > 0) {
                try {
                    if (map.lookup(fileBlock - 1) instanceof Extent before && before.state().hasDeviceBlocks()) {
                        return before.deviceBlockOf(fileBlock - 1) + 1;
                    }
                } catch (InvalidRangeException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        XfsGeometry geometry = volume.geometry;
        return volume.allocator.group((int) (inode.ino % geometry.agCount())).firstDataBlock();
    }
}
