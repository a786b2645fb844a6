package dev.iomap.api;

import java.io.IOException;

/**
 * The core's view of one file, handed to every adapter callback. Implemented by the core; adapters
 * only read it.
 *
 * <p>Thread-safe. {@link #size()} is the in-memory size ({@code i_size}), which buffered writes raise
 * before writeback; an adapter keeps its own on-disk size and updates it at I/O completion.
 */
public interface IomapInode {

    /** @return the inode number, unique within one mounted filesystem */
    long ino();

    /** @return the in-memory file size in bytes */
    long size();

    /** @return the filesystem block size in bytes, a power of two */
    int blockSize();

    /**
     * Releases the delayed-allocation reservation of the part of a write that did not happen (the
     * kernel's {@code iomap_file_buffered_write_punch_delalloc}). An adapter calls it from
     * {@link IomapOps#end} when {@code written < length} over a {@link IomapType#DELALLOC} mapping.
     *
     * <p>The range from the first block the write did not reach ({@code pos} rounded down when
     * nothing was written, else {@code pos + written} rounded up) to {@code pos + length} rounded up
     * is scanned in the page cache: {@code punch} is called for every run of blocks that has no dirty
     * cache, and never for a dirty block (its data, written earlier, still needs the reservation).
     * All arithmetic is 64-bit. Caller holds the inode lock (it is inside a write).
     *
     * @param pos the {@code pos} of the mapping given to {@link IomapOps#end}
     * @param length the {@code length} given to {@link IomapOps#end}
     * @param written the bytes written
     * @param punch releases one clean range
     * @throws IOException from {@code punch}
     */
    void releaseDelalloc(long pos, long length, long written, DelallocPunch punch) throws IOException;
}
