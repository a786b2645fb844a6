package dev.iomap.core;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Delayed allocation as XFS does it, for tests: a write's {@code begin} reserves every unallocated
 * block of the range and reports one {@code DELALLOC} mapping over reserved blocks; {@code end} hands
 * a short write to the core's delalloc release; {@code mapBlocks} turns reservations into blocks at
 * identity addresses. Block numbers are {@code long}, so offsets past 2^32 blocks work.
 */
final class DelallocTestOps implements IomapOps, MapBlocksWriteback {
    private final int blockSize;
    private final TreeSet<Long> reserved = new TreeSet<>();
    private final TreeSet<Long> allocated = new TreeSet<>();
    final List<long[]> punches = new ArrayList<>();

    DelallocTestOps(int blockSize) {
        this.blockSize = blockSize;
    }

    synchronized TreeSet<Long> reserved() {
        return new TreeSet<>(reserved);
    }

    @Override
    public synchronized IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request) {
        long first = pos / blockSize;
        long last = (pos + length - 1) / blockSize;
        long start = first * blockSize;
        if (allocated.contains(first)) {
            long end = first;
            while (end <= last && allocated.contains(end)) {
                end++;
            }
            return IomapMapping.of(Iomap.mapped(start, (end - first) * blockSize, start));
        }
        Long nextAllocated = allocated.ceiling(first);
        long end = Math.min(last + 1, nextAllocated == null ? Long.MAX_VALUE : nextAllocated);
        if (request.contains(IomapRequest.WRITE)) {
            for (long block = first; block < end; block++) {
                reserved.add(block);
            }
            return delalloc(start, end - first);
        }
        if (reserved.contains(first)) {
            long stop = first;
            while (stop < end && reserved.contains(stop)) {
                stop++;
            }
            return delalloc(start, stop - first);
        }
        Long nextReserved = reserved.ceiling(first);
        long stop = Math.min(end, nextReserved == null ? Long.MAX_VALUE : nextReserved);
        return IomapMapping.of(Iomap.hole(start, (stop - first) * blockSize));
    }

    private IomapMapping delalloc(long start, long blocks) {
        return IomapMapping.of(new Iomap(start, blocks * blockSize, IomapType.DELALLOC, Set.of(),
                Iomap.NULL_ADDR, null, 0));
    }

    @Override
    public void end(IomapInode inode, long pos, long length, long written, Set<IomapRequest> request,
            Iomap iomap) throws IOException {
        if (iomap.type() == IomapType.DELALLOC && written < length) {
            inode.releaseDelalloc(pos, length, written, this::punch);
        }
    }

    private synchronized void punch(IomapInode inode, long offset, long length) {
        punches.add(new long[] {offset, length});
        for (long block = offset / blockSize; block < (offset + length) / blockSize; block++) {
            reserved.remove(block);
        }
    }

    @Override
    public synchronized Iomap mapBlocks(IomapInode inode, long pos, long length) throws IOException {
        long block = pos / blockSize;
        if (!reserved.remove(block) && !allocated.contains(block)) {
            throw new IOException("no reservation for dirty block " + block);
        }
        allocated.add(block);
        return Iomap.mapped(block * blockSize, blockSize, block * blockSize);
    }
}
