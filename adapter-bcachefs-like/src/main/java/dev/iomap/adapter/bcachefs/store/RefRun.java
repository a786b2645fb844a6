package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockRange;

/**
 * A run of data blocks that all have the same, non-zero reference count: one key of the store's
 * allocation tree (btree 0).
 *
 * @param blocks the blocks
 * @param count their reference count, at least 1
 */
public record RefRun(BlockRange blocks, int count) {
    /** @throws IllegalArgumentException if {@code count} is below 1 */
    public RefRun {
        if (count < 1) {
            throw new IllegalArgumentException("a reference run has a count of at least 1, got " + count);
        }
    }
}
