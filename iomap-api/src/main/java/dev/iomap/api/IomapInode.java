package dev.iomap.api;

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
}
