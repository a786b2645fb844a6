package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockMapping;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentState;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The xfs-like {@code iomap_writeback_ops}: {@code xfs_writeback_range} ({@code xfs_map_blocks}, then
 * the core's add to the ioend; submission is the core's default) and the ioend completion
 * ({@code xfs_end_ioend}).
 *
 * <p>{@link #writebackRange} gives delayed allocations real blocks, allocated <em>unwritten</em> so that a
 * crash before the data is on the device never shows stale blocks; dirty data over shared blocks goes
 * to the COW fork ({@code SHARED}). {@link #ioendCompleted} converts what was written to written
 * extents, or remaps COW staging extents into the data fork, and raises the on-disk size to cover the
 * data, in the running transaction (durable at the next fsync). A failed write changes nothing. Neither
 * touches the times: the core sets mtime and ctime when a write starts ({@code updateTimes}), so a
 * {@code utimensat} after a buffered write is not undone when the data reaches the device.
 *
 * <p>Thread-safe: both take the metadata lock, then the inode lock.
 */
final class XfsWritebackOps implements WritebackOps {
    private final XfsVolume volume;
    private final FileSpace space;
    private final int blockSize;

    XfsWritebackOps(XfsVolume volume, FileSpace space) {
        this.volume = volume;
        this.space = space;
        this.blockSize = volume.geometry.blockSize();
    }

    /**
     * {@code xfs_writeback_range}: {@link #mapBlocks} (which takes and releases the locks), then
     * {@code iomap_add_to_ioend}. A failure releases nothing, where XFS punches the folio's delayed
     * allocation ({@code xfs_discard_folio}): the reservations of discarded dirty data stay until
     * truncate, punch, evict or unmount release them.
     */
    @Override
    public long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException {
        return wpc.addToIoend(mapBlocks(wpc.inode(), pos, length), pos, length);
    }

    /** {@code xfs_map_blocks}: real blocks for the dirty range at {@code pos}, one contiguous run. */
    Iomap mapBlocks(IomapInode inode, long pos, long length) throws IOException {
        return mapUnderLocks(inode, pos, length, this::mapLocked);
    }

    /**
     * {@code xfs_atomic_write_cow_iomap_begin}: the run at {@code pos} of an atomic direct write, out of
     * place whatever the data fork holds there: the COW fork's staging extent (allocated now if the COW
     * fork has a hole or a delayed allocation there), flagged {@code SHARED}. The data fork keeps pointing
     * at the old blocks until {@link #atomicWriteCompleted} remaps every run in one transaction.
     */
    Iomap mapAtomic(IomapInode inode, long pos, long length) throws IOException {
        return mapUnderLocks(inode, pos, length, (state, fileBlock, endBlock) -> {
            BlockMapping cow = state.cow.lookup(fileBlock);
            if (cow instanceof Extent) {
                return mapLocked(state, fileBlock, endBlock);   // the staged extent, as writeback maps it
            }
            Extent target = space.allocateUnwritten(state, state.cow, fileBlock,
                    Math.min(cow.endBlock(), endBlock) - fileBlock);
            return mapping(target, fileBlock, endBlock, IomapType.MAPPED, EnumSet.of(IomapFlag.SHARED), state);
        });
    }

    /** Maps blocks {@code [fileBlock, endBlock)} of a file under its lock (and the metadata lock). */
    @FunctionalInterface
    private interface LockedMapping {
        Iomap map(InodeState state, long fileBlock, long endBlock) throws IOException;
    }

    /**
     * The frame both mappings share: space for the range reserved, {@code how} run under the metadata
     * lock and the file's lock, then the shutdown check and a commit if the log has grown large.
     */
    private Iomap mapUnderLocks(IomapInode inode, long pos, long length, LockedMapping how) throws IOException {
        volume.checkMounted();
        InodeState state = volume.fileForIo(inode.ino());
        long fileBlock = pos / blockSize;
        long endBlock = Math.max(fileBlock + 1, Math.ceilDiv(pos + length, blockSize));
        volume.metaLock.lock();
        try {
            volume.ensureAvailable(endBlock - fileBlock);
            Iomap iomap;
            state.lock.lock();
            try {
                iomap = how.map(state, fileBlock, endBlock);
            } finally {
                state.lock.unlock();
            }
            volume.checkNotShutDown();
            volume.log.commitIfLarge();
            return iomap;
        } finally {
            volume.metaLock.unlock();
        }
    }

    private Iomap mapLocked(InodeState state, long fileBlock, long endBlock) throws IOException {
        if (state.cow.lookup(fileBlock) instanceof Extent staged) {
            Extent target = staged.state() == ExtentState.DELALLOC
                    ? space.allocateDelalloc(state, state.cow, staged.slice(fileBlock,
                            Math.min(staged.endBlock(), endBlock)))
                    : staged;
            return mapping(target, fileBlock, endBlock, IomapType.MAPPED, EnumSet.of(IomapFlag.SHARED), state);
        }
        BlockMapping data = state.data.lookup(fileBlock);
        if (data instanceof Extent extent) {
            long stop = Math.min(extent.endBlock(), endBlock);
            if (extent.state() == ExtentState.DELALLOC) {
                Extent allocated = space.allocateDelalloc(state, state.data, extent.slice(fileBlock, stop));
                return mapping(allocated, fileBlock, endBlock, IomapType.UNWRITTEN, Set.of(), state);
            }
            if (extent.shared()) {
                Extent staged = space.allocateUnwritten(state, state.cow, fileBlock, stop - fileBlock);
                return mapping(staged, fileBlock, endBlock, IomapType.MAPPED, EnumSet.of(IomapFlag.SHARED), state);
            }
            return mapping(extent, fileBlock, endBlock, extent.state().iomapType(), Set.of(), state);
        }
        // Dirty data over a hole that nothing reserved (e.g. written through a mapping): allocate now.
        long stop = Math.min(data.endBlock(), endBlock);
        Extent allocated = space.allocateUnwritten(state, state.data, fileBlock, stop - fileBlock);
        return mapping(allocated, fileBlock, endBlock, IomapType.UNWRITTEN, Set.of(), state);
    }

    @Override
    public void ioendCompleted(IomapInode inode, IoendCompletion completion) throws IOException {
        if (completion.failed() || volume.isUnmounted() || volume.isShutDown()) {
            return;
        }
        InodeState state = volume.inodes.get(inode.ino());
        if (state == null) {
            return;
        }
        long fileBlock = completion.offset() / blockSize;
        long blocks = Math.ceilDiv(completion.end(), blockSize) - fileBlock;
        long deviceBlock = completion.address() / blockSize;
        volume.metaLock.lock();
        try {
            state.lock.lock();
            try {
                if (completion.flags().contains(IomapFlag.SHARED)) {
                    space.remapCow(state, fileBlock, blocks, deviceBlock);
                } else if (completion.type() == IomapType.UNWRITTEN) {
                    space.convertUnwritten(state, fileBlock, blocks, deviceBlock);
                }
                long newSize = Math.min(inode.size(), completion.end());
                if (newSize > state.diskSize) {
                    state.diskSize = newSize;
                    volume.log.inodeChanged(state);
                }
            } finally {
                state.lock.unlock();
            }
            volume.log.commitIfLarge();
        } finally {
            volume.metaLock.unlock();
        }
    }

    /**
     * {@code xfs_reflink_end_atomic_cow}: every run's staging extents remapped into the data fork, and the
     * on-disk size raised, under the metadata lock without a commit between them, so that the running
     * transaction holds all of it or none (a commit holds whole operations). A failed write changes
     * nothing, as {@link #ioendCompleted} for a failed ioend: its staging extents stay in the COW fork for
     * the next write there, and go at unmount or eviction.
     */
    @Override
    public void atomicWriteCompleted(IomapInode inode, List<IoendCompletion> runs) throws IOException {
        if (runs.getFirst().failed() || volume.isUnmounted() || volume.isShutDown()) {
            return;
        }
        InodeState state = volume.inodes.get(inode.ino());
        if (state == null) {
            return;
        }
        volume.metaLock.lock();
        try {
            state.lock.lock();
            try {
                for (IoendCompletion run : runs) {
                    long fileBlock = run.offset() / blockSize;
                    space.remapCow(state, fileBlock, Math.ceilDiv(run.end(), blockSize) - fileBlock,
                            run.address() / blockSize);
                }
                long newSize = Math.min(inode.size(), runs.getLast().end());
                if (newSize > state.diskSize) {
                    state.diskSize = newSize;
                    volume.log.inodeChanged(state);
                }
            } finally {
                state.lock.unlock();
            }
            volume.log.commitIfLarge();
        } finally {
            volume.metaLock.unlock();
        }
    }

    /**
     * {@code xfs_ioend_needs_wq_completion}'s answer: an ioend into written blocks, not through the COW
     * fork, that ends within the on-disk size changes no metadata, so {@link #ioendCompleted} would do
     * nothing. Reads the on-disk size without the inode lock: every change of it happens before the
     * writeback that submitted this ioend took the locks it took, and so before this call.
     */
    @Override
    public boolean completesWithoutWork(IomapInode inode, IoendCompletion completion) {
        if (completion.type() != IomapType.MAPPED || completion.flags().contains(IomapFlag.SHARED)) {
            return false;
        }
        InodeState state = volume.inodes.get(inode.ino());
        return state != null && Math.min(inode.size(), completion.end()) <= state.diskSize;
    }

    private Iomap mapping(Extent extent, long fileBlock, long endBlock, IomapType type, Set<IomapFlag> flags,
            InodeState state) throws IOException {
        volume.checkInDataArea(state, extent);
        long stop = Math.min(extent.endBlock(), endBlock);
        return new Iomap(fileBlock * blockSize, (stop - fileBlock) * blockSize, type, flags,
                extent.deviceBlockOf(fileBlock) * blockSize, null, state.sequence);
    }
}
