package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.NoSpaceException;

/**
 * Free data space of the device, with reservations taken ahead of allocation (bcachefs's disk
 * reservations): the page cache reserves a block for every block a write dirties, so that writeback,
 * which allocates, never runs out of space. Node blocks of the store come from the same space and
 * are accounted for by a store-internal reserve, so metadata growth cannot starve data writeback of
 * space it had reserved.
 *
 * <p>Thread-safe.
 */
public interface DataSpace {

    /**
     * Reserves {@code blocks} free blocks: {@link #available()} drops by that much.
     *
     * @param blocks at least 0
     * @throws NoSpaceException if fewer are available (nothing is reserved then)
     */
    void reserve(long blocks) throws NoSpaceException;

    /**
     * Returns reserved blocks that will not be allocated.
     *
     * @param blocks at most what is reserved
     * @throws IllegalStateException if more than reserved
     */
    void unreserve(long blocks);

    /**
     * Allocates up to {@code wantBlocks} contiguous free blocks, consuming as many blocks of
     * reservation (the caller reserved them first). The blocks have reference count 0 and are owned by
     * the caller until an {@link Update#addRefs} of +1 commits; after a crash before that they are free.
     * An allocated block that the caller will not use goes back with {@link #release}.
     *
     * @param wantBlocks blocks wanted, at least 1, at most what the caller holds reserved
     * @param nearBlock a hint (the block after the previous extent of the file), or -1
     * @return a run of 1 to {@code wantBlocks} blocks
     * @throws NoSpaceException only if the reservation accounting was broken
     */
    BlockRange allocate(long wantBlocks, long nearBlock) throws NoSpaceException;

    /**
     * Gives back allocated blocks that no committed key references (count 0), e.g. after a failed
     * device write: they become free (and available) at once.
     *
     * @param blocks blocks from {@link #allocate} not yet referenced
     */
    void release(BlockRange blocks);

    /**
     * @param block a data block
     * @return its committed reference count (0 for free or in-flight blocks)
     */
    int refCount(long block);

    /** @return blocks that can still be reserved */
    long available();

    /**
     * Blocks whose reference count fell to 0 in committed transactions that are not durable yet: free
     * space already (bcachefs accounts it at commit), allocatable once a journal flush or checkpoint
     * makes those transactions durable, so that a crash cannot replay a tree pointing at reused blocks.
     *
     * @return such blocks, not counted in {@link #available()}
     */
    long pendingFree();

    /** @return blocks that are reserved and not yet allocated */
    long reserved();

    /** @return data blocks of the device (for statfs) */
    long totalBlocks();
}
