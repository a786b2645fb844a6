package dev.iomap.adapter.bcachefs.store;

import dev.iomap.device.BlockDevice;

/**
 * Geometry chosen when a store is formatted ({@link BtreeStore#format}). The node size is always the
 * device's block size.
 *
 * @param journalBlocks blocks of the journal ring, at least {@link #MIN_JOURNAL_BLOCKS}
 */
public record StoreFormat(long journalBlocks) {
    /** Fewest journal blocks a store has. */
    public static final long MIN_JOURNAL_BLOCKS = 64;
    /** Most journal blocks the default gives a large device. */
    public static final long MAX_DEFAULT_JOURNAL_BLOCKS = 16384;

    /** @throws IllegalArgumentException if {@code journalBlocks} is below {@link #MIN_JOURNAL_BLOCKS} */
    public StoreFormat {
        if (journalBlocks < MIN_JOURNAL_BLOCKS) {
            throw new IllegalArgumentException("a journal needs at least " + MIN_JOURNAL_BLOCKS
                    + " blocks, got " + journalBlocks);
        }
    }

    /**
     * @param device the device to format
     * @return the default: a journal of 1/64 of the device, at least {@link #MIN_JOURNAL_BLOCKS} and at
     *     most {@link #MAX_DEFAULT_JOURNAL_BLOCKS} blocks
     */
    public static StoreFormat defaults(BlockDevice device) {
        long blocks = device.capacity() / device.blockSize();
        return new StoreFormat(Math.clamp(blocks / 64, MIN_JOURNAL_BLOCKS, MAX_DEFAULT_JOURNAL_BLOCKS));
    }
}
