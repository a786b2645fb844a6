package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockMapping;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentMap;
import dev.iomap.adapter.support.ExtentState;
import dev.iomap.adapter.support.Hole;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WriteOps;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.util.EnumSet;
import java.util.Set;

/**
 * The xfs-like {@code iomap_ops}: {@code xfs_buffered_write_iomap_begin/end} and
 * {@code xfs_read_iomap_begin} in spirit.
 *
 * <p>A write over a hole reserves a delayed allocation ({@code DELALLOC}, {@code NEW}) in memory, plus
 * speculative preallocation past EOF when the write extends the file; a reservation that does not fit
 * fails with {@link NoSpaceException} before anything is changed. A write over shared blocks (or over a
 * range the COW fork already covers) is given the COW fork's mapping, flagged {@code SHARED}, with the
 * data fork's mapping as {@code srcmap}. Every mapping carries the inode's validity cookie.
 *
 * <p>A report ({@code REPORT}: seek data and seek hole) sees the data fork as a read does and changes
 * nothing, as {@code xfs_seek_iomap_begin}: delayed allocations are data, unwritten extents are for
 * the core to look up in the cache. A range staged in the COW fork over a data fork hole is reported
 * as the hole, where XFS reports it {@code UNWRITTEN}: the core counts dirty and in-flight cache over
 * a hole as data, which is what such a range holds until its I/O completes and the remap makes it
 * part of the data fork.
 *
 * <p>A direct write ({@code WRITE|DIRECT}) never meets a delayed allocation of its own: it is mapped
 * as writeback maps dirty data ({@code xfs_direct_write_iomap_begin}), with real blocks now: a hole or
 * a leftover delayed allocation (speculative preallocation past EOF) gets blocks allocated unwritten,
 * an unwritten extent stays unwritten, shared blocks get a COW fork destination ({@code SHARED}); the
 * ioend completion converts, remaps and raises the on-disk size once the data is on the device. An
 * atomic direct write ({@code WRITE|DIRECT|ATOMIC}) always goes to the COW fork, as XFS's software
 * atomic write ({@code xfs_atomic_write_cow_iomap_begin}): see {@link XfsWritebackOps#mapAtomic}.
 *
 * <p>Thread-safe: takes only the inode lock and the space account's lock, never the metadata lock
 * (except for a direct write, which allocates under it as writeback does), so buffered writers never
 * wait for journal I/O.
 */
final class XfsIomapOps implements IomapOps, WriteOps {
    /** Speculative preallocation never exceeds this. */
    static final long MAX_PREALLOC_BYTES = 1 << 20;
    /** Files smaller than this get no preallocation; a write after a hole gets this much. */
    static final long MIN_PREALLOC_BYTES = 64 << 10;

    private final XfsVolume volume;
    private final int blockSize;
    /** Maps direct writes: real blocks now, as writeback maps dirty data. */
    private final XfsWritebackOps direct;

    XfsIomapOps(XfsVolume volume, XfsWritebackOps direct) {
        this.volume = volume;
        this.blockSize = volume.geometry.blockSize();
        this.direct = direct;
    }

    @Override
    public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request)
            throws IOException {
        if (request.contains(IomapRequest.DIRECT) && request.contains(IomapRequest.WRITE)) {
            return IomapMapping.of(request.contains(IomapRequest.ATOMIC) ? direct.mapAtomic(inode, pos, length)
                    : direct.mapBlocks(inode, pos, length));
        }
        volume.checkMounted();
        InodeState state = volume.fileForIo(inode.ino());
        long fileBlock = pos / blockSize;
        long maxBlocks = volume.geometry.maxFileSize() / blockSize;
        long end = pos > Long.MAX_VALUE - length ? Long.MAX_VALUE : pos + length;
        long endBlock = Math.max(fileBlock + 1, Math.min(Math.ceilDiv(end, blockSize), maxBlocks));
        boolean write = request.contains(IomapRequest.WRITE) || request.contains(IomapRequest.FAULT);
        boolean zero = request.contains(IomapRequest.ZERO);
        state.lock.lock();
        try {
            state.protectedEnd = Math.max(state.protectedEnd, write ? Math.max(inode.size(), end) : inode.size());
            BlockMapping data = state.data.lookup(fileBlock);
            if (write && !request.contains(IomapRequest.UNSHARE) && data.endBlock() < endBlock) {
                checkRoom(state, fileBlock, endBlock);
            }
            if ((write || zero) && (!state.cow.isEmpty() || (data instanceof Extent shared && shared.shared()))) {
                // no COW fork and no shared data extent (every write of a file never reflinked): no lookup
                BlockMapping cow = state.cow.lookup(fileBlock);
                if (cow instanceof Extent || (data instanceof Extent extent && extent.shared())) {
                    return cowMapping(state, fileBlock, endBlock, data, cow);
                }
            }
            if (!write || request.contains(IomapRequest.UNSHARE)) {
                return IomapMapping.of(report(state, fileBlock, endBlock, data, zero ? inode.size() : -1));
            }
            if (data instanceof Extent extent && extent.state() != ExtentState.DELALLOC) {
                return overwriteMapping(state, extent);
            }
            return IomapMapping.of(writeMapping(inode, state, fileBlock, endBlock, end, data));
        } finally {
            state.lock.unlock();
        }
    }

    @Override
    public void end(IomapInode inode, long pos, long length, long written, Set<IomapRequest> request,
            Iomap iomap) throws IOException {
        InodeState state = volume.inodes.get(inode.ino());
        if (state == null) {
            return;
        }
        boolean write = request.contains(IomapRequest.WRITE) || request.contains(IomapRequest.FAULT);
        if (write && iomap.type() == IomapType.DELALLOC && written < length) {
            ExtentMap fork = iomap.has(IomapFlag.SHARED) ? state.cow : state.data;
            inode.releaseDelalloc(pos, length, written,
                    (ignored, offset, bytes) -> punchDelalloc(state, fork, offset, bytes));
            if (fork == state.data) {
                state.lock.lock();
                try {
                    state.protectedEnd = inode.size();
                    trimPreallocation(state);
                } finally {
                    state.lock.unlock();
                }
            }
        }
        state.lock.lock();
        try {
            state.protectedEnd = inode.size();
        } finally {
            state.lock.unlock();
        }
    }

    /** @return this: the write ops are {@link #valid} alone */
    @Override
    public WriteOps writeOps() {
        return this;
    }

    /** {@code xfs_iomap_valid}: the mapping's cookie is the inode's current sequence. */
    @Override
    public boolean valid(IomapInode inode, Iomap iomap) {
        InodeState state = volume.inodes.get(inode.ino());
        return state != null && state.sequence == iomap.validityCookie();
    }

    /**
     * Releases the delayed allocations of a fork over {@code [offset, offset + bytes)}; written and
     * unwritten extents there are left alone.
     */
    void punchDelalloc(InodeState state, ExtentMap fork, long offset, long bytes) throws InvalidRangeException {
        long first = offset / blockSize;
        long blocks = Math.ceilDiv(offset + bytes, blockSize) - first;
        state.lock.lock();
        try {
            for (Extent extent : fork.extents(first, blocks)) {
                if (extent.state() == ExtentState.DELALLOC) {
                    fork.punch(extent.fileBlock(), extent.length());
                    volume.space.unreserve(extent.length());
                    state.changed();
                }
            }
        } finally {
            state.lock.unlock();
        }
    }

    /**
     * Drops the speculative preallocation: delayed allocations of the data fork wholly past the
     * protected end (in-memory size, or the write in progress). Caller holds the inode lock.
     *
     * @return blocks released
     */
    long trimPreallocation(InodeState state) throws InvalidRangeException {
        long from = Math.ceilDiv(state.protectedEnd, blockSize);
        long released = 0;
        for (Extent extent : state.data.extents(from, ExtentMap.END - from)) {
            if (extent.state() == ExtentState.DELALLOC) {
                state.data.punch(extent.fileBlock(), extent.length());
                volume.space.unreserve(extent.length());
                released += extent.length();
                state.changed();
            }
        }
        return released;
    }

    /**
     * A write into a written or unwritten, unshared data extent: the whole extent, as
     * {@code xfs_buffered_write_iomap_begin} maps the extent it found ({@code xfs_bmbt_to_iomap},
     * untrimmed; the iterator trims it to the write). The same extent is asked for by every write of
     * a run of overwrites, so the mapping is kept and handed out again while the validity cookie has
     * not moved: no allocation per write.
     */
    private IomapMapping overwriteMapping(InodeState state, Extent extent) throws IOException {
        IomapMapping cached = state.overwriteMapping;
        long sequence = state.sequence;
        if (cached != null && state.overwriteSequence == sequence
                && cached.iomap().offset() == extent.fileBlock() * blockSize
                && cached.iomap().length() == extent.length() * blockSize) {
            return cached;
        }
        IomapMapping fresh = IomapMapping.of(mapping(extent, extent.fileBlock(), extent.endBlock(), Set.of(), state));
        state.overwriteMapping = fresh;
        state.overwriteSequence = sequence;
        return fresh;
    }

    private Iomap writeMapping(IomapInode inode, InodeState state, long fileBlock, long endBlock, long end,
            BlockMapping data) throws IOException {
        if (data instanceof Extent extent) {
            return mapping(extent, fileBlock, Math.min(extent.endBlock(), endBlock), Set.of(), state);
        }
        Hole hole = (Hole) data;
        long blocks = Math.min(hole.endBlock(), endBlock) - fileBlock;
        reserve(state, blocks);
        long extra = 0;
        if (end > inode.size()) {
            long wanted = preallocationBlocks(state, inode.size(), fileBlock, end);
            long room = Math.min(hole.endBlock(), volume.geometry.maxFileSize() / blockSize) - (fileBlock + blocks);
            extra = volume.space.reserveUpTo(Math.max(0, Math.min(wanted, room)));
        }
        state.data.insert(Extent.delalloc(fileBlock, blocks + extra));
        state.changed();
        return delalloc(fileBlock, fileBlock + blocks, EnumSet.of(IomapFlag.NEW), state);
    }

    /**
     * How much to preallocate past EOF for a write extending the file to {@code end}, as
     * {@code xfs_iomap_prealloc_size} decides: nothing while the file is smaller than
     * {@link #MIN_PREALLOC_BYTES} (likely its only write), the minimum right after a hole (a sparse
     * writer such as {@code cp --sparse} would otherwise fill its holes with preallocated blocks once
     * the file grows past them), else the file's size up to {@link #MAX_PREALLOC_BYTES}.
     */
    private long preallocationBlocks(InodeState state, long size, long fileBlock, long end)
            throws InvalidRangeException {
        if (size < MIN_PREALLOC_BYTES) {
            return 0;
        }
        boolean afterHole = fileBlock == 0 || !(state.data.lookup(fileBlock - 1) instanceof Extent);
        if (afterHole) {
            return Math.max(1, MIN_PREALLOC_BYTES / blockSize);
        }
        return Math.min(end, MAX_PREALLOC_BYTES) / blockSize;
    }

    private IomapMapping cowMapping(InodeState state, long fileBlock, long endBlock, BlockMapping data,
            BlockMapping cow) throws IOException {
        long stop = Math.min(endBlock, data.endBlock());
        Iomap iomap;
        if (cow instanceof Extent staged) {
            stop = Math.min(stop, staged.endBlock());
            iomap = mapping(staged, fileBlock, stop, EnumSet.of(IomapFlag.SHARED), state);
        } else {
            stop = Math.min(stop, cow.endBlock());
            reserve(state, stop - fileBlock);
            state.cow.insert(Extent.delalloc(fileBlock, stop - fileBlock));
            state.changed();
            iomap = delalloc(fileBlock, stop, EnumSet.of(IomapFlag.SHARED), state);
        }
        return new IomapMapping(iomap, report(state, fileBlock, stop, data, -1));
    }

    /**
     * Refuses a write spanning several mappings whose holes and shared blocks will not all fit, before
     * its first mapping is written: a write that cannot fit then changes nothing (unless another writer
     * takes the space between two of its mappings).
     */
    private void checkRoom(InodeState state, long fileBlock, long endBlock) throws IOException {
        long needed = 0;
        for (BlockMapping mapping : state.data.mappings(fileBlock, endBlock - fileBlock)) {
            if (mapping instanceof Hole hole) {
                needed += hole.length();
            } else if (mapping instanceof Extent extent && extent.shared()) {
                needed += extent.length();
            }
        }
        if (needed > volume.space.availableForData()) {
            reserve(state, needed);
            volume.space.unreserve(needed);
        }
    }

    /** Reserves delayed-allocation blocks, trimming speculative preallocation first if they do not fit. */
    private void reserve(InodeState state, long blocks) throws NoSpaceException {
        if (volume.space.tryReserve(blocks)) {
            return;
        }
        try {
            trimPreallocation(state);
            for (InodeState other : volume.inodes.values()) {
                if (other != state && other.lock.tryLock()) {
                    try {
                        trimPreallocation(other);
                    } finally {
                        other.lock.unlock();
                    }
                }
            }
        } catch (InvalidRangeException e) {
            throw new IllegalStateException(e);
        }
        if (!volume.space.tryReserve(blocks)) {
            throw new NoSpaceException("xfs-like: no space to write " + blocks + " blocks to inode " + state.ino
                    + ": " + volume.space.availableForData() + " blocks left");
        }
    }

    /**
     * What a read, a zeroing or a report sees: the data fork. For zeroing ({@code zeroSize >= 0}), delayed
     * allocations past EOF are reported as holes (they hold no data).
     */
    private Iomap report(InodeState state, long fileBlock, long endBlock, BlockMapping data, long zeroSize)
            throws IOException {
        long stop = Math.min(endBlock, data.endBlock());
        if (data instanceof Extent extent) {
            if (extent.state() == ExtentState.DELALLOC && zeroSize >= 0) {
                long eofBlock = Math.ceilDiv(zeroSize, blockSize);
                if (fileBlock >= eofBlock) {
                    // Speculative preallocation about to come inside EOF (truncate up, or the gap before a
                    // write past EOF): it holds no data, so it is released rather than zeroed, and the
                    // range stays a hole (cp --sparse's holes stay holes).
                    punchDelalloc(state, state.data, fileBlock * blockSize, (stop - fileBlock) * blockSize);
                    return hole(fileBlock, stop, state);
                }
                stop = Math.min(stop, eofBlock);
            }
            // A reflinked extent is reported SHARED, as xfs_read_iomap_begin does after
            // xfs_reflink_trim_around_shared: fiemap shows it, reads ignore it.
            return mapping(extent, fileBlock, stop,
                    extent.shared() ? EnumSet.of(IomapFlag.SHARED) : Set.of(), state);
        }
        return hole(fileBlock, stop, state);
    }

    private Iomap mapping(Extent extent, long from, long to, Set<IomapFlag> flags, InodeState state)
            throws IOException {
        volume.checkInDataArea(state, extent);
        return switch (extent.state()) {
            case DELALLOC -> delalloc(from, to, flags, state);
            case WRITTEN, UNWRITTEN -> new Iomap(from * blockSize, (to - from) * blockSize,
                    extent.state().iomapType(), flags, extent.deviceBlockOf(from) * blockSize, null,
                    state.sequence);
        };
    }

    private Iomap delalloc(long from, long to, Set<IomapFlag> flags, InodeState state) {
        return new Iomap(from * blockSize, (to - from) * blockSize, IomapType.DELALLOC, flags, Iomap.NULL_ADDR,
                null, state.sequence);
    }

    private Iomap hole(long from, long to, InodeState state) {
        return Iomap.hole(from * blockSize, (to - from) * blockSize).withValidityCookie(state.sequence);
    }
}
