package dev.iomap.adapter.support;

/**
 * File blocks with nothing behind them. Immutable.
 *
 * @param fileBlock the first file block, at least 0
 * @param length blocks, at least 1; {@code fileBlock + length} does not overflow
 */
public record Hole(long fileBlock, long length) implements BlockMapping {

    /** @throws IllegalArgumentException if the range is negative, empty or overflows */
    public Hole {
        Extent.checkRange("hole", fileBlock, length);
    }
}
