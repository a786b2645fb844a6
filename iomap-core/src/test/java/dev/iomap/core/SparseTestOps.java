package dev.iomap.core;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WritebackOps;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.Set;

/**
 * A minimal adapter for tests: file offset + base = device offset, blocks allocated by a write's
 * {@code begin} (reported {@code MAPPED + NEW}), unallocated blocks are holes, {@code end} frees
 * the new blocks a short write did not reach, and {@link #truncateBlocks} frees blocks past EOF.
 */
final class SparseTestOps implements IomapOps, MapBlocksWriteback {
    private final int blockSize;
    private final long base;
    private final BitSet allocated = new BitSet();
    private BitSet newlyAllocated = new BitSet();

    SparseTestOps(int blockSize) {
        this(blockSize, 0);
    }

    SparseTestOps(int blockSize, long base) {
        this.blockSize = blockSize;
        this.base = base;
    }

    /** Frees every block wholly past {@code newSize}. */
    synchronized void truncateBlocks(long newSize) {
        int first = (int) ((newSize + blockSize - 1) / blockSize);
        allocated.clear(first, Math.max(first, allocated.length()));
    }

    synchronized int allocatedBlocks() {
        return allocated.cardinality();
    }

    synchronized boolean isAllocated(long pos) {
        return allocated.get((int) (pos / blockSize));
    }

    @Override
    public synchronized IomapMapping begin(IomapInode inode, long pos, long length,
            Set<IomapRequest> request) {
        int first = (int) (pos / blockSize);
        int last = (int) ((pos + length - 1) / blockSize);
        long start = (long) first * blockSize;
        if (allocated.get(first)) {
            int end = Math.min(last + 1, allocated.nextClearBit(first));
            return IomapMapping.of(Iomap.mapped(start, (long) (end - first) * blockSize, base + start));
        }
        int end = Math.min(last + 1, nextSet(first));
        long bytes = (long) (end - first) * blockSize;
        if (!request.contains(IomapRequest.WRITE)) {
            return IomapMapping.of(Iomap.hole(start, bytes));
        }
        allocated.set(first, end);
        newlyAllocated = new BitSet();
        newlyAllocated.set(first, end);
        return IomapMapping.of(new Iomap(start, bytes, IomapType.MAPPED, EnumSet.of(IomapFlag.NEW),
                base + start, null, 0));
    }

    private int nextSet(int from) {
        int next = allocated.nextSetBit(from);
        return next < 0 ? Integer.MAX_VALUE : next;
    }

    @Override
    public synchronized void end(IomapInode inode, long pos, long length, long written,
            Set<IomapRequest> request, Iomap iomap) {
        if (!iomap.has(IomapFlag.NEW)) {
            return;
        }
        // The first block the write did not reach: a block it wrote part of stays.
        int firstUnused = written == 0 ? (int) (pos / blockSize)
                : (int) ((pos + written + blockSize - 1) / blockSize);
        for (int block = newlyAllocated.nextSetBit(firstUnused); block >= 0;
                block = newlyAllocated.nextSetBit(block + 1)) {
            allocated.clear(block);
        }
        newlyAllocated = new BitSet();
    }

    @Override
    public synchronized Iomap mapBlocks(IomapInode inode, long pos, long length) {
        int first = (int) (pos / blockSize);
        if (!allocated.get(first)) {
            throw new IllegalStateException("dirty data over a hole at " + pos);
        }
        int end = allocated.nextClearBit(first);
        long start = (long) first * blockSize;
        return Iomap.mapped(start, (long) (end - first) * blockSize, base + start);
    }
}
