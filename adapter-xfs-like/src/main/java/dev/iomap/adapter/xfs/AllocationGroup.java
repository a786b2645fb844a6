package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.adapter.support.FreeSpaceAllocator;
import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
 * <p>Not thread-safe: used under the mount's metadata lock (the allocators lock themselves too).
 */
final class AllocationGroup {
    private final Geometry geometry;
    private final int agno;
    private final FreeSpaceAllocator onDisk;
    private final FreeSpaceAllocator available;
    private final RefcountMap refcounts;

    AllocationGroup(Geometry geometry, int agno, FreeSpaceAllocator onDisk, RefcountMap refcounts) {
        this.geometry = geometry;
        this.agno = agno;
        this.onDisk = onDisk;
        this.refcounts = refcounts;
        this.available = FreeSpaceAllocator.allAllocated(onDisk.firstBlock(), onDisk.blockCount());
        try {
            for (BlockRange free : onDisk.freeExtents()) {
                available.free(free.start(), free.length());
            }
        } catch (dev.iomap.api.IomapException e) {
            throw new IllegalStateException("copying a consistent allocator failed", e);
        }
    }

    /** @return a freshly formatted group: everything free but its header blocks */
    static AllocationGroup formatted(Geometry geometry, int agno) {
        long start = geometry.agStart(agno);
        FreeSpaceAllocator free = FreeSpaceAllocator.allFree(start, geometry.agLength(agno));
        try {
            free.allocateExact(start, geometry.agHeaderBlocks(agno));
        } catch (dev.iomap.api.IomapException e) {
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
        return geometry.agStart(agno) + geometry.agHeaderBlocks(agno);
    }

    /**
     * The payloads of the group's header, free-space leaves and reference-count leaves, by block.
     *
     * @return block number to payload, header first
     */
    Map<Long, ByteBuffer> encode() {
        try {
            Map<Long, ByteBuffer> payloads = new LinkedHashMap<>();
            List<BlockRange> free = onDisk.freeExtents();
            List<RefcountMap.Record> records = refcounts.records();
            payloads.put(geometry.agStart(agno), header(free, records.size()));
            long start = geometry.agStart(agno);
            int next = 0;
            for (int leaf = 0; leaf < geometry.freeLeaves(agno); leaf++) {
                long limit = start + (leaf + 1) * geometry.freeLeafSpan();
                List<BlockRange> inLeaf = new ArrayList<>();
                while (next < free.size() && free.get(next).start() < limit) {
                    inLeaf.add(free.get(next++));
                }
                payloads.put(geometry.freeLeafBlock(agno, leaf), freeLeaf(leaf, inLeaf));
            }
            next = 0;
            for (int leaf = 0; leaf < geometry.refcountLeaves(agno); leaf++) {
                long limit = start + (leaf + 1) * geometry.refcountLeafSpan();
                List<RefcountMap.Record> inLeaf = new ArrayList<>();
                while (next < records.size() && records.get(next).start() < limit) {
                    inLeaf.add(records.get(next++));
                }
                payloads.put(geometry.refcountLeafBlock(agno, leaf), refcountLeaf(leaf, inLeaf));
            }
            return payloads;
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("allocation group " + agno + " does not fit its leaves", e);
        }
    }

    private ByteBuffer header(List<BlockRange> free, int refcountRecords) throws InvalidRangeException {
        long longest = 0;
        for (BlockRange range : free) {
            longest = Math.max(longest, range.length());
        }
        return BlockWriter.allocate(68, "xfs-like AG header")
                .putInt(agno).putInt(0)
                .putLong(geometry.agStart(agno)).putLong(geometry.agLength(agno))
                .putLong(onDisk.freeBlocks()).putLong(free.size()).putLong(longest)
                .putLong(refcountRecords)
                .putInt(geometry.freeLeaves(agno)).putInt(geometry.refcountLeaves(agno))
                .written();
    }

    private ByteBuffer freeLeaf(int leaf, List<BlockRange> extents) throws InvalidRangeException {
        BlockWriter writer = BlockWriter.allocate(Layout.LEAF_HEADER + extents.size() * Layout.FREE_RECORD_BYTES,
                "xfs-like free-space leaf").putInt(agno).putInt(leaf).putInt(extents.size()).putInt(0);
        for (BlockRange range : extents) {
            writer.putLong(range.start()).putLong(range.length());
        }
        return writer.written();
    }

    private ByteBuffer refcountLeaf(int leaf, List<RefcountMap.Record> records) throws InvalidRangeException {
        BlockWriter writer = BlockWriter.allocate(
                Layout.LEAF_HEADER + records.size() * Layout.REFCOUNT_RECORD_BYTES, "xfs-like refcount leaf")
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
