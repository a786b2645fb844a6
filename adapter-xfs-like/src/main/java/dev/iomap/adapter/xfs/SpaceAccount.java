package dev.iomap.adapter.xfs;

import dev.iomap.api.NoSpaceException;

/**
 * Free-space accounting of one mount, the counters XFS keeps in its superblock: {@code free} blocks
 * (free on the device once the running transaction commits, busy ones included), blocks
 * {@code reserved} by delayed allocations, and a {@code setAside} that only metadata may use.
 *
 * <p>Invariant: {@code reserved <= free}. A delayed allocation or a data allocation needs
 * {@code free - reserved - setAside} blocks; metadata needs {@code free - reserved}. Converting a
 * reservation into blocks lowers both counters, so what was promised is always there.
 *
 * <p>Thread-safe: every method is atomic, so writers reserving without the metadata lock and writeback
 * allocating under it see one consistent account.
 */
final class SpaceAccount {
    private final long setAside;
    private long free;
    private long reserved;

    SpaceAccount(long free, long setAside) {
        this.free = free;
        this.setAside = setAside;
    }

    /** @return blocks file data may still get: what statfs calls free */
    synchronized long availableForData() {
        return Math.max(0, free - reserved - setAside);
    }

    synchronized long free() {
        return free;
    }

    synchronized long reserved() {
        return reserved;
    }

    /**
     * Reserves {@code blocks} for a delayed allocation.
     *
     * @return whether they were reserved (nothing is reserved otherwise)
     */
    synchronized boolean tryReserve(long blocks) {
        if (free - reserved - setAside < blocks) {
            return false;
        }
        reserved += blocks;
        return true;
    }

    /** Reserves as many of {@code blocks} as there are (speculative preallocation), returning how many. */
    synchronized long reserveUpTo(long blocks) {
        long granted = Math.max(0, Math.min(blocks, free - reserved - setAside));
        reserved += granted;
        return granted;
    }

    /** Gives back a reservation that will not be used. */
    synchronized void unreserve(long blocks) {
        if (blocks > reserved) {
            throw new IllegalStateException("unreserving " + blocks + " blocks, only " + reserved + " reserved");
        }
        reserved -= blocks;
    }

    /** A delayed allocation of {@code blocks} got its blocks. */
    synchronized void reservedAllocated(long blocks) {
        unreserve(blocks);
        free -= blocks;
    }

    /**
     * Takes {@code blocks} that were not reserved.
     *
     * @param blocks blocks to take
     * @param metadata whether they are for metadata (which may use the set-aside)
     * @throws NoSpaceException if they are not there (nothing is taken)
     */
    synchronized void take(long blocks, boolean metadata) throws NoSpaceException {
        long limit = free - reserved - (metadata ? 0 : setAside);
        if (limit < blocks) {
            throw new NoSpaceException("xfs-like: no space for " + blocks + (metadata ? " metadata" : " data")
                    + " blocks: " + free + " free, " + reserved + " reserved for delayed allocation, "
                    + setAside + " set aside for metadata");
        }
        free -= blocks;
    }

    /** Gives blocks back: allocated ones freed, or taken ones not used after all. */
    synchronized void release(long blocks) {
        free += blocks;
    }
}
