package dev.iomap.testkit.snapfs;

import dev.iomap.api.NoSpaceException;
import java.util.BitSet;

/**
 * The blocks of one snapfs mount: which are in use, and which freed ones must wait for a commit. A
 * freed block the last commit references stays in use until the next commit: until then a power cut
 * brings that commit back, pointing at it, so it must not hold someone else's new data. Blocks no
 * commit references are free at once. Not thread-safe (the mount's monitor guards it).
 */
final class SnapSpace {
    private final SnapLayout layout;
    private final BitSet used = new BitSet();
    /** Freed blocks the last commit references: reusable after the next commit. */
    private final BitSet freedSinceCommit = new BitSet();
    /** Blocks the last commit references (and, after a failed commit, those it tried to). */
    private BitSet committed;
    /** Where the next allocation starts looking (next fit). */
    private long cursor;

    /**
     * @param layout the device's layout: blocks before its data area are never handed out
     * @param referenced the blocks the mounted commit references (in use)
     */
    SnapSpace(SnapLayout layout, BitSet referenced) {
        this.layout = layout;
        this.committed = referenced;
        this.cursor = layout.firstDataBlock();
        used.set(0, (int) layout.firstDataBlock());
        used.or(referenced);
    }

    /**
     * Allocates contiguous blocks, next fit from the previous allocation.
     *
     * @param count blocks wanted, at least 1
     * @return {@code {first block, count}}: at least one block, at most {@code count}
     * @throws NoSpaceException if no data block is free
     */
    long[] allocate(long count) throws NoSpaceException {
        long start = findFree(cursor);
        if (start < 0) {
            start = findFree(layout.firstDataBlock());
        }
        if (start < 0) {
            throw new NoSpaceException("snapfs: no free block among " + layout.dataBlocks());
        }
        long end = start;
        while (end - start < count && end < layout.totalBlocks() && !used.get((int) end)) {
            end++;
        }
        used.set((int) start, (int) end);
        cursor = end;
        return new long[] {start, end - start};
    }

    private long findFree(long from) {
        long free = used.nextClearBit((int) from);
        return free < layout.totalBlocks() ? free : -1;
    }

    /** Frees a block no file maps any more: after the next commit if the last one references it, else now. */
    void free(long block) {
        if (committed.get((int) block)) {
            freedSinceCommit.set((int) block);
        } else {
            used.clear((int) block);
        }
    }

    /**
     * Before a commit's metadata is written: what it references stays protected even if the commit
     * fails after reaching the device.
     *
     * @param referenced the blocks the commit references
     */
    void committing(BitSet referenced) {
        committed.or(referenced);
    }

    /**
     * After a commit is durable: blocks freed before it are free now, and it is the last commit.
     *
     * @param referenced the blocks it references (as given to {@link #committing})
     */
    void committed(BitSet referenced) {
        used.andNot(freedSinceCommit);
        freedSinceCommit.clear();
        committed = referenced;
    }

    /** @return data blocks in use, including freed ones waiting for a commit */
    long usedDataBlocks() {
        return used.cardinality() - layout.firstDataBlock();
    }
}
