package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.FreeSpaceAllocator;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@link DataSpace} of a {@link BtreeStore}: free blocks of the node-and-data region (derived at
 * open from the allocation tree and the node blocks), data reservations, and a node reserve that
 * reservations cannot take. Blocks whose count fell to 0 wait in a pending-free list until the
 * transaction that freed them is durable. Every method takes the store's lock.
 */
final class StoreSpace implements DataSpace {
    private record PendingFree(long seq, BlockRange blocks) {
    }

    private final ReentrantLock lock;
    private final RefCounts refs;
    private final FreeSpaceAllocator allocator;
    private final long nodeReserve;
    private final boolean readOnly;
    private final ArrayDeque<PendingFree> pendingFree = new ArrayDeque<>();
    private long pendingFreeBlocks;
    private long reserved;

    /**
     * @param dataStart first block of the region
     * @param dataBlocks blocks of the region
     * @param readOnly whether nothing may be reserved
     */
    StoreSpace(ReentrantLock lock, RefCounts refs, long dataStart, long dataBlocks, boolean readOnly) {
        this.lock = lock;
        this.refs = refs;
        this.allocator = FreeSpaceAllocator.allFree(dataStart, dataBlocks);
        this.nodeReserve = Math.min(dataBlocks / 2, Math.max(32, dataBlocks / 50));
        this.readOnly = readOnly;
    }

    /** @return blocks data reservations can never take */
    long nodeReserve() {
        return nodeReserve;
    }

    /** At open: marks blocks in use (a node, or a referenced run). */
    void markUsed(long start, long length, String what) throws CorruptFileSystemException {
        try {
            allocator.allocateExact(start, length);
        } catch (NoSpaceException | InvalidRangeException e) {
            throw new CorruptFileSystemException(what + " at blocks [" + start + ", +" + length
                    + ") is outside the node and data region or used twice: " + e.getMessage());
        }
    }

    /** @return a block for a node (caller holds the lock) */
    long allocateNode(long near) throws IOException {
        if (allocator.freeBlocks() <= reserved) {
            throw new NoSpaceException("no block for a B-tree node: " + allocator.freeBlocks() + " free, "
                    + reserved + " reserved for data");
        }
        return allocator.allocate(1, near, 1).start();
    }

    /** Frees a node block no superblock points to any more (caller holds the lock). */
    void freeNode(long block) throws IOException {
        allocator.free(block, 1);
    }

    /** Blocks whose count fell to 0 in transaction {@code seq}: free once it is durable. */
    void deferFree(long seq, BlockRange blocks) {
        pendingFree.add(new PendingFree(seq, blocks));
        pendingFreeBlocks += blocks.length();
    }

    /** Frees the pending blocks of transactions up to {@code durableSeq} (caller holds the lock). */
    void releaseDurable(long durableSeq) throws IOException {
        while (!pendingFree.isEmpty() && pendingFree.peek().seq() <= durableSeq) {
            BlockRange blocks = pendingFree.poll().blocks();
            pendingFreeBlocks -= blocks.length();
            for (BlockRange zero : refs.zeroIn(blocks)) {
                allocator.free(zero.start(), zero.length());
            }
        }
    }

    /**
     * @param from first block wanted
     * @param end first block past the range, above {@code from}
     * @return the first run of blocks free in the allocator (durably free: pending frees are not in it)
     *     inside {@code [from, end)}, clipped to it, if any (caller holds the lock)
     */
    Optional<BlockRange> firstFreeIn(long from, long end) {
        return allocator.firstFreeOverlap(new BlockRange(from, end - from)).map(free -> {
            long start = Math.max(free.start(), from);
            return new BlockRange(start, Math.min(free.end(), end) - start);
        });
    }

    /** @return whether some block of {@code range} is free in the allocator (caller holds the lock) */
    boolean anyFree(BlockRange range) {
        return allocator.firstFreeOverlap(range).isPresent();
    }

    /**
     * @param dirtyNodes nodes the next checkpoint writes
     * @return blocks left for nodes after that checkpoint's writes, data reservations kept (caller holds
     *     the lock)
     */
    long nodeHeadroom(long dirtyNodes) {
        return allocator.freeBlocks() - reserved - dirtyNodes;
    }

    /** @return free blocks (caller holds the lock) */
    long freeBlocks() {
        return allocator.freeBlocks();
    }

    @Override
    public void reserve(long blocks) throws NoSpaceException {
        if (blocks < 0) {
            throw new IllegalArgumentException("cannot reserve " + blocks + " blocks");
        }
        lock.lock();
        try {
            if (readOnly && blocks > 0) {
                throw new NoSpaceException("the store is read-only: nothing can be reserved");
            }
            long available = availableLocked();
            if (blocks > available) {
                throw new NoSpaceException("cannot reserve " + blocks + " blocks: " + available + " available");
            }
            reserved += blocks;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void unreserve(long blocks) {
        lock.lock();
        try {
            if (blocks < 0 || blocks > reserved) {
                throw new IllegalStateException("cannot unreserve " + blocks + " blocks: " + reserved + " reserved");
            }
            reserved -= blocks;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public BlockRange allocate(long wantBlocks, long nearBlock) throws NoSpaceException {
        lock.lock();
        try {
            if (wantBlocks < 1 || wantBlocks > reserved) {
                throw new IllegalStateException("cannot allocate " + wantBlocks + " blocks: " + reserved
                        + " reserved");
            }
            BlockRange got = allocator.allocate(wantBlocks, nearBlock, 1);
            reserved -= got.length();
            return got;
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("allocate: " + e.getMessage(), e);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void release(BlockRange blocks) {
        lock.lock();
        try {
            if (refs.zeroIn(blocks).size() != 1 || refs.zeroIn(blocks).getFirst().length() != blocks.length()) {
                throw new IllegalStateException("cannot release " + blocks + ": some are referenced");
            }
            allocator.free(blocks.start(), blocks.length());
        } catch (CorruptFileSystemException | InvalidRangeException e) {
            throw new IllegalStateException("cannot release " + blocks + ": " + e.getMessage(), e);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int refCount(long block) {
        lock.lock();
        try {
            return refs.count(block);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long available() {
        lock.lock();
        try {
            return availableLocked();
        } finally {
            lock.unlock();
        }
    }

    private long availableLocked() {
        return readOnly ? 0 : Math.max(0, allocator.freeBlocks() - reserved - nodeReserve);
    }

    @Override
    public long pendingFree() {
        lock.lock();
        try {
            return pendingFreeBlocks;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long reserved() {
        lock.lock();
        try {
            return reserved;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long totalBlocks() {
        return allocator.blockCount();
    }
}
