package dev.iomap.spi;

/**
 * What {@link FileSystemAdapter#probeFormat} found on a device: whose filesystem it holds and with
 * which block size, as its superblock says, so that a tool (like {@code blkid}) need not be told.
 *
 * @param adapter the adapter's {@link FileSystemAdapter#name() name}
 * @param blockSize the filesystem's block size in bytes, a power of two from 512 to 65536; 0 if the
 *     superblock does not say or says something out of that range
 */
public record ProbedFormat(String adapter, int blockSize) {

    /** Block size of a format whose superblock does not say its block size. */
    public static final int UNKNOWN_BLOCK_SIZE = 0;

    /**
     * @param adapter the adapter's name
     * @param blockSize the block size read from a superblock, whatever it is
     * @return the format, with {@link #UNKNOWN_BLOCK_SIZE} if {@code blockSize} is not a power of
     *     two from 512 to 65536 (a damaged superblock)
     */
    public static ProbedFormat of(String adapter, int blockSize) {
        boolean valid = Integer.bitCount(blockSize) == 1 && blockSize >= 512 && blockSize <= 65536;
        return new ProbedFormat(adapter, valid ? blockSize : UNKNOWN_BLOCK_SIZE);
    }
}
