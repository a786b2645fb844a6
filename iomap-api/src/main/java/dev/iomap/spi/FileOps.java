package dev.iomap.spi;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.NotSupportedException;
import java.io.IOException;

/**
 * The mount's operations on an open file's data and life, the kernel's {@code file_operations}
 * ({@code open}, {@code release}, {@code fsync}, {@code fallocate}, {@code remap_file_range}) together
 * with the size change of {@code setattr(ATTR_SIZE)}: every one takes the core's {@link IomapInode},
 * whose cache the core has written back or dropped as each method says. Reached through
 * {@link MountedFileSystem#fileOps()}; thread-safe.
 *
 * <p>Locking the core guarantees: {@link #setSize}, {@link #fallocate} and {@link #cloneRange} run with
 * the inode lock(s) held exclusively; {@link #use} is called without the inode lock around each
 * operation of an open file.
 *
 * <p>Errors: {@link dev.iomap.api.NoSpaceException}, {@link NotSupportedException},
 * {@link dev.iomap.api.CorruptFileSystemException}, or the device's {@link IOException}.
 */
public interface FileOps {

    /**
     * The first open file of an inode on this mount is being opened (its open count goes from 0 to 1;
     * the core's namespace lock is held). Paired with exactly one later {@link #release} or
     * {@link SuperOps#evict} of the inode, at its last close here, if this returns normally. A cluster
     * adapter records here that this node has the inode open, so that no other node frees it while it
     * is (GFS2 holds the inode's iopen glock shared). This default does nothing.
     *
     * @param inode the file
     * @throws java.nio.file.NoSuchFileException if the inode lost its last name since the path was
     *     resolved (another node unlinked it); the open fails
     * @throws IOException on a device or lock error; the open fails
     */
    default void open(IomapInode inode) throws IOException {
    }

    /**
     * The last open file of an inode that still has a name closed: drop what only an open writer
     * needs, such as speculative preallocation past EOF ({@code xfs_release} frees those blocks, so a
     * closed file holds only its data). Called with the inode lock held exclusively. This default does
     * nothing.
     *
     * @param inode the file, at its in-memory size
     * @throws IOException on a device error
     */
    default void release(IomapInode inode) throws IOException {
    }

    /**
     * Called by the core around a read, write, seek, truncate or fallocate of an open file (and before
     * a stat consults its in-memory size), without the inode lock; the returned use is closed when the
     * operation ended. A cluster adapter holds the file's glock across the whole operation, so another
     * node sees a write whole or not at all (GFS2 holds the glock across {@code read_iter} and
     * {@code write_iter}), and, if a demotion dropped the cache since, first sets the size another node
     * left with {@link IomapInode#refreshSize}. This default holds nothing.
     *
     * @param inode the file
     * @param write whether the operation changes the file (a write, truncate or fallocate)
     * @return the use, closed once by the core
     * @throws IOException if the glock cannot be had or the device fails
     */
    default FileUse use(IomapInode inode, boolean write) throws IOException {
        return FileUse.NONE;
    }

    /** One core operation's use of a file ({@link #use}): closing it ends what the adapter held for it. */
    @FunctionalInterface
    interface FileUse extends AutoCloseable {
        /** A use that holds nothing. */
        FileUse NONE = () -> { };

        /** Ends the use; never throws. */
        @Override
        void close();
    }

    /**
     * Makes a file's metadata durable after its data has been written back (journal commit and
     * device flush).
     *
     * @param inode the file
     * @param dataOnly true for fdatasync: only what is needed to read the data back (size, extents)
     * @throws IOException on a device error
     */
    void fsync(IomapInode inode, boolean dataOnly) throws IOException;

    /**
     * Refuses a size the file cannot take, before anything changes. The core calls it for a truncate
     * under the inode lock and before it touches the page cache, so a refusal leaves cache and file as
     * they were; {@link #setSize} comes later and does the work. A zone file, which takes only 0 or its
     * capacity, needs it: a refusal from {@code setSize} would come after the cache past the new size
     * was dropped. Default: every size is accepted.
     *
     * @param inode the file, at its current size
     * @param newSize the size asked for, at least 0
     * @throws IOException to refuse ({@link NotSupportedException} for a size the file cannot take)
     */
    default void checkSetSize(IomapInode inode, long newSize) throws IOException {
    }

    /**
     * Changes a file's size on the device and sets its mtime and ctime. Called after the core truncated
     * its cache, under the inode lock: free blocks past a smaller size (the partial last block was
     * already zeroed through the cache).
     *
     * @param inode the file (its {@link IomapInode#size()} is already {@code newSize})
     * @param newSize the new size
     * @throws IOException on a device error, or {@link NotSupportedException}
     */
    void setSize(IomapInode inode, long newSize) throws IOException;

    /**
     * Allocates, punches or zeroes whole blocks. For punch and zero the core has already written back
     * and dropped the cache over the range and zeroed the partial blocks at its edges through the
     * cache; {@code offset} and {@code length} here are block aligned.
     *
     * @param inode the file
     * @param mode what to do
     * @param offset first byte, block aligned
     * @param length bytes, block aligned
     * @throws IOException no space, or {@link NotSupportedException}
     */
    void fallocate(IomapInode inode, FallocateMode mode, long offset, long length) throws IOException;

    /**
     * Shares blocks of {@code source} with {@code target} (reflink, the kernel's
     * {@code remap_file_range}). The core has written back the source range and dropped the target
     * range from the cache. Default: not supported.
     *
     * @param source the file to share from
     * @param srcOffset block-aligned offset in the source
     * @param target the file to share into
     * @param dstOffset block-aligned offset in the target
     * @param length bytes (block aligned, or ending at the source's EOF)
     * @throws IOException no space, or {@link NotSupportedException}
     */
    default void cloneRange(IomapInode source, long srcOffset, IomapInode target, long dstOffset, long length)
            throws IOException {
        throw new NotSupportedException("clone is not supported by this filesystem");
    }
}
