package dev.iomap.adapter.support;

/**
 * A run of device blocks. Immutable.
 *
 * @param start the first block, at least 0
 * @param length blocks, at least 1; {@code start + length} does not overflow
 */
public record BlockRange(long start, long length) {

    /** @throws IllegalArgumentException if the range is negative, empty or overflows */
    public BlockRange {
        if (start < 0 || length < 1 || start > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException("block range [" + start + ", +" + length
                    + ") is negative, empty or overflows");
        }
    }

    /** @return the first block after the range */
    public long end() {
        return start + length;
    }

    /**
     * @param block a block
     * @return whether the range contains it
     */
    public boolean contains(long block) {
        return block >= start && block < end();
    }

    /**
     * @param other another range
     * @return whether they share a block
     */
    public boolean overlaps(BlockRange other) {
        return start < other.end() && other.start < end();
    }

    @Override
    public String toString() {
        return "[" + start + ", +" + length + ")";
    }
}
