package dev.iomap.api;

/**
 * What {@code statfs} says of a filesystem.
 *
 * @param blockSize bytes per block
 * @param totalBlocks blocks available for data and metadata
 * @param freeBlocks blocks not in use and not reserved
 * @param totalInodes inodes the filesystem can hold (or {@code Long.MAX_VALUE} if unbounded)
 * @param freeInodes inodes still available
 */
public record FsStat(int blockSize, long totalBlocks, long freeBlocks, long totalInodes, long freeInodes) {
}
