package dev.iomap.adapter.support.skeleton;

/**
 * A run of file blocks as a {@link BlockMapModel} reports it: {@code count} file blocks from
 * {@code fileBlock}, backed by device blocks {@code deviceBlock, deviceBlock + 1, ...} (contiguous on the
 * device), or a hole ({@code deviceBlock} {@link #HOLE}).
 *
 * @param fileBlock the first file block
 * @param count blocks in the run, at least 1
 * @param deviceBlock the device block of {@code fileBlock}, or {@link #HOLE}
 * @param fresh whether the blocks were allocated just now (by {@link BlockMapModel#allocate}) and hold
 *     no data yet: the skeleton maps them NEW until their first write-back completes
 */
public record Run(long fileBlock, long count, long deviceBlock, boolean fresh) {
    /** The device block of a hole. */
    public static final long HOLE = -1;

    /** @throws IllegalArgumentException for a negative start, an empty run, or a fresh hole */
    public Run {
        if (fileBlock < 0 || count < 1 || deviceBlock < HOLE || (fresh && deviceBlock == HOLE)) {
            throw new IllegalArgumentException("bad run: file block " + fileBlock + " count " + count + " device block "
                    + deviceBlock + (fresh ? " fresh" : ""));
        }
    }

    /**
     * @param fileBlock the first file block
     * @param count blocks
     * @return a hole
     */
    public static Run hole(long fileBlock, long count) {
        return new Run(fileBlock, count, HOLE, false);
    }

    /**
     * @param fileBlock the first file block
     * @param count blocks
     * @param deviceBlock the device block of {@code fileBlock}
     * @return blocks that are mapped already
     */
    public static Run mapped(long fileBlock, long count, long deviceBlock) {
        return new Run(fileBlock, count, deviceBlock, false);
    }

    /**
     * @param fileBlock the first file block
     * @param count blocks
     * @param deviceBlock the device block of {@code fileBlock}
     * @return blocks just allocated, holding no data yet
     */
    public static Run allocated(long fileBlock, long count, long deviceBlock) {
        return new Run(fileBlock, count, deviceBlock, true);
    }

    /** @return whether this is a hole */
    public boolean isHole() {
        return deviceBlock == HOLE;
    }

    /** @return the file block after the run */
    public long end() {
        return fileBlock + count;
    }
}
