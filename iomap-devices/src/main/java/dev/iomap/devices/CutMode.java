package dev.iomap.devices;

/**
 * What a {@link PowerCutDevice} keeps of the writes (and discards) that completed but were not
 * flushed, when it makes the image a power cut leaves. The modes that choose take every choice from
 * the caller's seeded {@link java.util.Random}, so an image reproduces from its seed.
 */
public enum CutMode {
    /** Nothing: the image holds exactly what the last {@code flush} made durable. */
    LOSE_UNFLUSHED,
    /**
     * A random subset, applied in random order, each write whole or torn (a random subset of its
     * device blocks, each block written whole or not at all): what a disk with a volatile write cache
     * may leave behind.
     */
    TEAR_AND_REORDER,
    /**
     * A random subset, each write whole, applied in the order they were written (of two kept writes
     * to one block, the later wins). The share kept is drawn anew for each image, uniformly from
     * {@code [0, 1)}, so some images keep nearly every write and some nearly none: a write cache that
     * loses writes but never tears or reorders them.
     */
    LOSE_SOME_WRITES,
    /**
     * Each device block of each write kept or lost with even odds, applied in the order they were
     * written: a write cache that writes back block by block, in order, and loses any of them.
     */
    LOSE_SOME_BLOCKS
}
