package dev.iomap.adapter.support;

/**
 * A run of file blocks backed by a run of device blocks (or, for {@link ExtentState#DELALLOC}, by a
 * reservation with no device blocks yet). Immutable.
 *
 * @param fileBlock the first file block, at least 0
 * @param length blocks, at least 1; {@code fileBlock + length} does not overflow
 * @param deviceBlock the device block of {@code fileBlock}, at least 0 with {@code deviceBlock + length}
 *     not overflowing; {@link #NO_DEVICE_BLOCK} exactly when the state is {@link ExtentState#DELALLOC}
 * @param state what the blocks hold
 * @param shared whether the device blocks are shared with another file (reflink): a write must copy
 *     them first
 */
public record Extent(long fileBlock, long length, long deviceBlock, ExtentState state, boolean shared)
        implements BlockMapping {

    /** The device block of an extent that has none. */
    public static final long NO_DEVICE_BLOCK = -1;

    /**
     * Checks the invariants above.
     *
     * @throws IllegalArgumentException naming the bad value
     * @throws NullPointerException if {@code state} is null
     */
    public Extent {
        checkRange("extent", fileBlock, length);
        if (!state.hasDeviceBlocks()) {
            if (deviceBlock != NO_DEVICE_BLOCK) {
                throw new IllegalArgumentException(state + " extent at file block " + fileBlock
                        + " has no device blocks, got device block " + deviceBlock);
            }
        } else if (deviceBlock < 0 || deviceBlock > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException(state + " extent at file block " + fileBlock
                    + ": device blocks [" + deviceBlock + ", +" + length + ") are negative or overflow");
        }
    }

    /**
     * @param fileBlock first file block
     * @param length blocks
     * @param deviceBlock device block of {@code fileBlock}
     * @return a written, unshared extent
     */
    public static Extent written(long fileBlock, long length, long deviceBlock) {
        return new Extent(fileBlock, length, deviceBlock, ExtentState.WRITTEN, false);
    }

    /**
     * @param fileBlock first file block
     * @param length blocks
     * @param deviceBlock device block of {@code fileBlock}
     * @return an unwritten (preallocated), unshared extent
     */
    public static Extent unwritten(long fileBlock, long length, long deviceBlock) {
        return new Extent(fileBlock, length, deviceBlock, ExtentState.UNWRITTEN, false);
    }

    /**
     * @param fileBlock first file block
     * @param length blocks
     * @return a delayed-allocation reservation
     */
    public static Extent delalloc(long fileBlock, long length) {
        return new Extent(fileBlock, length, NO_DEVICE_BLOCK, ExtentState.DELALLOC, false);
    }

    /**
     * @param block a file block inside this extent
     * @return its device block, or {@link #NO_DEVICE_BLOCK} for a delalloc extent
     * @throws IllegalArgumentException if the block is not inside the extent
     */
    public long deviceBlockOf(long block) {
        if (!contains(block)) {
            throw new IllegalArgumentException("file block " + block + " is not in " + this);
        }
        return state.hasDeviceBlocks() ? deviceBlock + (block - fileBlock) : NO_DEVICE_BLOCK;
    }

    /**
     * @param from first file block of the piece, inside this extent
     * @param to first file block after the piece, greater than {@code from}, at most {@link #endBlock()}
     * @return the part of this extent over {@code [from, to)}, with the matching device blocks
     * @throws IllegalArgumentException if the piece is empty or not inside this extent
     */
    public Extent slice(long from, long to) {
        if (from < fileBlock || to <= from || to > endBlock()) {
            throw new IllegalArgumentException("[" + from + ", " + to + ") is not a piece of " + this);
        }
        return new Extent(from, to - from, deviceBlockOf(from), state, shared);
    }

    /**
     * @param newState the state of the copy
     * @return this extent in another state; a {@link ExtentState#DELALLOC} one cannot change to a state
     *     with device blocks (give it blocks with a new extent)
     * @throws IllegalArgumentException if the device block does not suit the new state
     */
    public Extent withState(ExtentState newState) {
        long newDeviceBlock = newState.hasDeviceBlocks() ? deviceBlock : NO_DEVICE_BLOCK;
        return new Extent(fileBlock, length, newDeviceBlock, newState, shared);
    }

    /**
     * @param isShared whether the copy's blocks are shared
     * @return this extent, shared or not
     */
    public Extent withShared(boolean isShared) {
        return new Extent(fileBlock, length, deviceBlock, state, isShared);
    }

    /**
     * @param next an extent
     * @return whether {@code next} starts where this one ends, in the file and (if they have any) on
     *     the device, with the same state and sharing, so the two can be one extent
     */
    public boolean canMergeWith(Extent next) {
        return next.fileBlock == endBlock()
                && next.state == state
                && next.shared == shared
                && (!state.hasDeviceBlocks() || next.deviceBlock == deviceBlock + length);
    }

    static void checkRange(String what, long fileBlock, long length) {
        if (fileBlock < 0 || length < 1 || fileBlock > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException(what + " [" + fileBlock + ", +" + length
                    + ") is negative, empty or overflows");
        }
    }
}
