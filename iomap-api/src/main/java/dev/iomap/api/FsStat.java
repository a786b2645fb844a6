package dev.iomap.api;

/**
 * What {@code statfs} says of a filesystem.
 *
 * @param blockSize bytes per block
 * @param totalBlocks blocks available for data and metadata
 * @param freeBlocks blocks not in use and not reserved
 * @param totalInodes inodes the filesystem can hold (or {@code Long.MAX_VALUE} if unbounded)
 * @param freeInodes inodes still available
 * @param availableBlocks of the free blocks, how many can be given to file data: {@code statfs}'s
 *     {@code f_bavail}, which {@code df} shows as available. Fewer than {@code freeBlocks} where mapping
 *     data takes metadata blocks from the same free space (a gfs2-like file's indirect blocks), so that a
 *     file as large as what is said to be available fits (xfstests generic/103 fallocates all of it but
 *     512 KiB); at most {@code freeBlocks}
 */
public record FsStat(int blockSize, long totalBlocks, long freeBlocks, long totalInodes, long freeInodes,
        long availableBlocks) {

    /** @throws IllegalArgumentException if {@code availableBlocks} is negative or more than {@code freeBlocks} */
    public FsStat {
        if (availableBlocks < 0 || availableBlocks > Math.max(0, freeBlocks)) {
            throw new IllegalArgumentException("available blocks " + availableBlocks + " not within the "
                    + freeBlocks + " free ones");
        }
    }

    /**
     * Counts where every free block can hold file data ({@code availableBlocks == freeBlocks}).
     *
     * @param blockSize bytes per block
     * @param totalBlocks blocks available for data and metadata
     * @param freeBlocks blocks not in use and not reserved
     * @param totalInodes inodes the filesystem can hold (or {@code Long.MAX_VALUE} if unbounded)
     * @param freeInodes inodes still available
     */
    public FsStat(int blockSize, long totalBlocks, long freeBlocks, long totalInodes, long freeInodes) {
        this(blockSize, totalBlocks, freeBlocks, totalInodes, freeInodes, Math.max(0, freeBlocks));
    }
}
