package dev.iomap.adapter.xfs;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.adapter.support.FreeSpaceAllocator;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapException;
import dev.iomap.api.NoSpaceException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * One allocation group in memory: its free space twice over and its reference counts.
 *
 * <p>{@code onDisk} is the free space the device will say once the running transaction commits: every
 * free is applied to it at once. {@code available} is what may be handed out now: it lacks the
 * <em>busy</em> extents, freed by transactions not yet on the device (data written into them could
 * otherwise overwrite blocks a crash gives back to their old owner). Busy extents move to
 * {@code available} when the journal makes their free durable. Both allocators index free extents by
 * start and by size (adapter-support's {@link FreeSpaceAllocator}); {@code available} is always a subset
 * of {@code onDisk}.
 *
 * <p>On the device the group is its header and the leaves that hold records (the header's leaf
 * bitmap marks them); every change of {@code onDisk} or of the reference counts goes through this
 * class, which remembers the leaves it may have changed, so that a commit writes the header and those
 * leaves only ({@link #encodeChanged()}).
 *
 * <p>Not thread-safe: used under the mount's metadata lock (the allocators lock themselves too).
 */
final class AllocationGroup {
    private final XfsGeometry geometry;
    private final int agno;
    private final FreeSpaceAllocator onDisk;
    private final FreeSpaceAllocator available;
    private final RefcountMap refcounts;
    /**
     * Leaf bits (free-space leaves, then reference-count leaves) of the leaves whose records may have
     * changed since the last commit; null if none.
     */
    private BitSet changedLeaves;

    AllocationGroup(XfsGeometry geometry, int agno, FreeSpaceAllocator onDisk, RefcountMap refcounts) {
        this.geometry = geometry;
        this.agno = agno;
        this.onDisk = onDisk;
        this.refcounts = refcounts;
        this.available = FreeSpaceAllocator.allAllocated(onDisk.firstBlock(), onDisk.blockCount());
        try {
            for (BlockRange free : onDisk.freeExtents()) {
                available.free(free.start(), free.length());
            }
        } catch (IomapException e) {
            throw new IllegalStateException("copying a consistent allocator failed", e);
        }
    }

    /** @return a freshly formatted group: everything free but its header blocks */
    static AllocationGroup formatted(XfsGeometry geometry, int agno) {
        long start = geometry.agStart(agno);
        FreeSpaceAllocator free = FreeSpaceAllocator.allFree(start, geometry.agLength(agno));
        try {
            free.allocateExact(start, geometry.agHeaderBlocks(agno));
        } catch (IomapException e) {
            throw new IllegalStateException("a fresh group has room for its headers", e);
        }
        return new AllocationGroup(geometry, agno, free, new RefcountMap());
    }

    int agno() {
        return agno;
    }

    FreeSpaceAllocator onDisk() {
        return onDisk;
    }

    FreeSpaceAllocator available() {
        return available;
    }

    RefcountMap refcounts() {
        return refcounts;
    }

    /** @return the first block after the header: where allocations are best started */
    long firstDataBlock() {
        return geometry.agDataStart(agno);
    }

    /**
     * Allocates blocks that are free on the device (see {@link FreeSpaceAllocator#allocateExact}),
     * remembering which free-space leaves change.
     */
    void allocateOnDisk(long start, long length) throws NoSpaceException, InvalidRangeException {
        long from = freeExtentStartBefore(start);
        onDisk.allocateExact(start, length);
        changed(freeLeafOf(from), freeLeafOf(start + length));
    }

    /**
     * Frees blocks on the device (see {@link FreeSpaceAllocator#free}), remembering which free-space
     * leaves change.
     */
    void freeOnDisk(long start, long length) throws IomapException {
        long from = freeExtentStartBefore(start);
        onDisk.free(start, length);
        changed(freeLeafOf(from), freeLeafOf(start + length));
    }

    /** Adds an owner to every block of the range (see {@link RefcountMap#increment}). */
    void incrementRefcount(long start, long length) {
        long from = refcounts.recordStart(start - 1, start);
        refcounts.increment(start, length);
        changed(refcountLeafOf(from), refcountLeafOf(start + length));
    }

    /**
     * Removes an owner from every block of the range (see {@link RefcountMap#decrement}).
     *
     * @throws CorruptFileSystemException if a count would go below 0; nothing changed
     */
    RefcountMap.Change decrementRefcount(long start, long length) throws CorruptFileSystemException {
        long from = refcounts.recordStart(start - 1, start);
        RefcountMap.Change change = refcounts.decrement(start, length);
        changed(refcountLeafOf(from), refcountLeafOf(start + length));
        return change;
    }

    /**
     * The free extent holding the block before {@code block} starts where the free-space records a
     * change at {@code block} can touch begin: it may grow, shrink or merge. Free extents that start
     * between there and the end of the change cannot exist (the blocks changed are all free, or all in
     * use, before the change).
     */
    private long freeExtentStartBefore(long block) {
        if (block == firstDataBlock()) {
            return block;
        }
        return onDisk.firstFreeOverlap(new BlockRange(block - 1, 1)).map(BlockRange::start).orElse(block);
    }

    private long firstBlock() {
        return geometry.agStart(agno);
    }

    /** @return the free-space leaf holding records that start at {@code block}, clipped to the data blocks */
    private int freeLeafOf(long block) {
        return geometry.freeLeafOf(agno, clip(block));
    }

    /** @return the leaf bit of the reference-count leaf holding records that start at {@code block}, clipped */
    private int refcountLeafOf(long block) {
        return geometry.freeLeaves(agno) + geometry.refcountLeafOf(agno, clip(block));
    }

    /** @return {@code block} moved into the group's data blocks (the end of a change may be the group's end) */
    private long clip(long block) {
        return Math.clamp(block, firstDataBlock(), firstBlock() + geometry.agLength(agno) - 1);
    }

    /** Leaves {@code [first, last]} (leaf bits) may hold other records than the device has. */
    private void changed(int first, int last) {
        if (changedLeaves == null) {
            changedLeaves = new BitSet();
        }
        changedLeaves.set(first, last + 1);
    }

    /**
     * The payloads of the group's header and of every leaf that holds records (mkfs, and tests that
     * forge groups).
     *
     * @return block number to payload, header first
     */
    Map<Long, ByteBuffer> encodeAll() {
        return encode(leaf -> true);
    }

    /**
     * The payloads of the group's header and of the leaves that changed since {@link #clearChanged()}
     * and hold records: what a commit writes. A leaf left empty is not written; the header's bitmap no
     * longer marks it.
     *
     * @return block number to payload, header first
     */
    Map<Long, ByteBuffer> encodeChanged() {
        BitSet changed = changedLeaves == null ? new BitSet() : changedLeaves;
        return encode(changed::get);
    }

    /** The changes so far are on the device (a commit wrote them). */
    void clearChanged() {
        changedLeaves = null;
    }

    private Map<Long, ByteBuffer> encode(IntPredicate wanted) {
        try {
            List<BlockRange> free = onDisk.freeExtents();
            List<RefcountMap.Record> records = refcounts.records();
            BitSet inUse = new BitSet(geometry.leaves(agno));
            Map<Long, ByteBuffer> leaves = new LinkedHashMap<>();
            for (int next = 0; next < free.size();) {
                int leaf = freeLeafOf(free.get(next).start());
                int first = next;
                while (next < free.size() && freeLeafOf(free.get(next).start()) == leaf) {
                    next++;
                }
                inUse.set(leaf);
                if (wanted.test(leaf)) {
                    leaves.put(geometry.freeLeafBlock(agno, leaf), freeLeaf(leaf, free.subList(first, next)));
                }
            }
            for (int next = 0; next < records.size();) {
                int bit = refcountLeafOf(records.get(next).start());
                int first = next;
                while (next < records.size() && refcountLeafOf(records.get(next).start()) == bit) {
                    next++;
                }
                inUse.set(bit);
                if (wanted.test(bit)) {
                    int leaf = bit - geometry.freeLeaves(agno);
                    leaves.put(geometry.refcountLeafBlock(agno, leaf), refcountLeaf(leaf, records.subList(first, next)));
                }
            }
            Map<Long, ByteBuffer> payloads = new LinkedHashMap<>();
            payloads.put(firstBlock(), header(free, records.size(), inUse));
            payloads.putAll(leaves);
            return payloads;
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("allocation group " + agno + " does not fit its leaves", e);
        }
    }

    private ByteBuffer header(List<BlockRange> free, int refcountRecords, BitSet inUse)
            throws InvalidRangeException {
        long longest = 0;
        for (BlockRange range : free) {
            longest = Math.max(longest, range.length());
        }
        int bitmapBytes = Math.ceilDiv(geometry.leaves(agno), Byte.SIZE);
        byte[] bitmap = Arrays.copyOf(inUse.toByteArray(), bitmapBytes);
        return BlockWriter.allocate(XfsGeometry.AG_HEADER_FIXED_BYTES + bitmapBytes, "xfs-like AG header")
                .putInt(agno).putInt(0)
                .putLong(firstBlock()).putLong(geometry.agLength(agno))
                .putLong(onDisk.freeBlocks()).putLong(free.size()).putLong(longest)
                .putLong(refcountRecords)
                .putInt(geometry.freeLeaves(agno)).putInt(geometry.refcountLeaves(agno))
                .putBytes(bitmap)
                .written();
    }

    private ByteBuffer freeLeaf(int leaf, List<BlockRange> extents) throws InvalidRangeException {
        BlockWriter writer = BlockWriter.allocate(XfsLayout.LEAF_HEADER + extents.size() * XfsLayout.FREE_RECORD_BYTES,
                "xfs-like free-space leaf").putInt(agno).putInt(leaf).putInt(extents.size()).putInt(0);
        for (BlockRange range : extents) {
            writer.putLong(range.start()).putLong(range.length());
        }
        return writer.written();
    }

    private ByteBuffer refcountLeaf(int leaf, List<RefcountMap.Record> records) throws InvalidRangeException {
        BlockWriter writer = BlockWriter.allocate(
                XfsLayout.LEAF_HEADER + records.size() * XfsLayout.REFCOUNT_RECORD_BYTES, "xfs-like refcount leaf")
                .putInt(agno).putInt(leaf).putInt(records.size()).putInt(0);
        for (RefcountMap.Record record : records) {
            writer.putLong(record.start()).putLong(record.length()).putInt(Math.toIntExact(record.count()));
        }
        return writer.written();
    }

    @Override
    public String toString() {
        return "allocation group " + agno + " [" + geometry.agStart(agno) + ", +" + geometry.agLength(agno) + ")";
    }
}
