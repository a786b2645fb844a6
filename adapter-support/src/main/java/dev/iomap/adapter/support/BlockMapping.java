package dev.iomap.adapter.support;

/**
 * What {@link ExtentMap} says about a run of file blocks: an {@link Extent} or a {@link Hole}.
 * Switch on it with patterns.
 */
public sealed interface BlockMapping permits Extent, Hole {

    /** @return the first file block */
    long fileBlock();

    /** @return blocks in the run, at least 1 */
    long length();

    /** @return the first file block after the run */
    default long endBlock() {
        return fileBlock() + length();
    }

    /**
     * @param block a file block
     * @return whether the run contains it
     */
    default boolean contains(long block) {
        return block >= fileBlock() && block - fileBlock() < length();
    }
}
