package dev.iomap.devices;

/** What a {@link PowerCutDevice} keeps of the writes that completed but were not flushed. */
public enum CutMode {
    /** Nothing: the image holds exactly what the last {@code flush} made durable. */
    LOSE_UNFLUSHED,
    /**
     * A random subset, applied in random order, each write whole or torn (a random subset of its
     * device blocks, each block written whole or not at all): what a disk with a volatile write cache
     * may leave behind.
     */
    TEAR_AND_REORDER
}
