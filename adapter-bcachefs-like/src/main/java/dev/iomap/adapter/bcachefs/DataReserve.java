package dev.iomap.adapter.bcachefs;

import java.io.IOException;
import dev.iomap.adapter.bcachefs.store.DataSpace;
import dev.iomap.api.NoSpaceException;

/**
 * The data space as writes reserve it: the store's {@link DataSpace} less a margin kept for the
 * B-tree nodes that the extent keys of the reserved data will need (bcachefs keeps a metadata reserve
 * for the same reason). Without it, data could reserve the last free block and the transaction that
 * inserts its extent key at writeback could find no block for a node, losing data a write accepted.
 * The margin is {@code totalBlocks / 16 + 64} blocks: enough for one key per data block in 1 KiB nodes.
 *
 * <p>Blocks a copy-on-write overwrite freed become free only once the transaction that freed them is
 * durable (so a crash cannot replay a tree pointing at reused blocks). A reservation that finds too
 * little space therefore flushes the journal first ({@code reclaim}, bcachefs's journal reclaim when
 * allocation is blocked) and tries again before it fails with ENOSPC.
 * Thread-safe.
 */
final class DataReserve {
    /** Makes committed transactions durable, releasing the blocks they freed. */
    @FunctionalInterface
    interface Reclaim {
        /** @throws IOException if the journal cannot be written */
        void run() throws IOException;
    }

    private final DataSpace space;
    private final long margin;
    private final Reclaim reclaim;

    DataReserve(DataSpace space, Reclaim reclaim) {
        this.space = space;
        this.margin = space.totalBlocks() / 16 + 64;
        this.reclaim = reclaim;
    }

    /** @return blocks a write may still reserve without a journal flush */
    long available() {
        return Math.max(0, space.available() - margin);
    }

    /**
     * @return blocks a write may reserve, counting those that committed transactions freed: what
     *     {@link #reserve} gets after the journal flush it does when short (statfs's free space)
     */
    long free() {
        return Math.max(0, space.available() + space.pendingFree() - margin);
    }

    /**
     * Reserves {@code blocks} blocks.
     *
     * @throws NoSpaceException if that would eat into the metadata margin
     */
    void reserve(long blocks) throws NoSpaceException {
        synchronized (this) {
            if (blocks > available()) {
                try {
                    reclaim.run();
                } catch (IOException e) {
                    NoSpaceException noSpace = new NoSpaceException("bcachefs-like: no space left ("
                            + available() + " blocks free for data) and the journal flush that would free"
                            + " overwritten blocks failed: " + e.getMessage());
                    noSpace.initCause(e);
                    throw noSpace;
                }
            }
            if (blocks > available()) {
                throw new NoSpaceException("bcachefs-like: no space left (" + available() + " blocks free for data)");
            }
            space.reserve(blocks);
        }
    }

    /** Gives back {@code blocks} reserved blocks. */
    void unreserve(long blocks) {
        space.unreserve(blocks);
    }
}
