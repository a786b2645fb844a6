package dev.iomap.api;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * An open regular file of an {@link IomapFileSystem}: positional buffered I/O through the page cache.
 *
 * <p>Thread-safe. A writeback error is reported once to each open file, by its next {@link #fsync()}
 * or {@link #fdatasync()}. After {@link #close()} every method fails with
 * {@link java.nio.channels.ClosedChannelException}.
 */
public interface IomapFile extends Closeable {

    /** @return the inode number */
    long ino();

    /** @return the current size */
    long size();

    /**
     * Reads from {@code pos} into {@code dst}, up to EOF.
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go; its position advances
     * @return bytes read, or -1 if {@code pos} is at or past EOF
     * @throws IOException on a bad offset or a device error
     */
    int read(long pos, ByteBuffer dst) throws IOException;

    /**
     * Writes all remaining bytes of {@code src} at {@code pos}, growing the file if needed.
     *
     * @param pos file offset, at least 0
     * @param src the bytes; its position advances
     * @return bytes written
     * @throws IOException on a bad range, no space, or an operation the adapter refuses (e.g. a write
     *     not at EOF on an append-only file)
     */
    int write(long pos, ByteBuffer src) throws IOException;

    /**
     * Sets the size; bytes past a smaller size are gone, bytes up to a larger size read as zeroes.
     *
     * @param size the new size, at least 0
     * @throws IOException on a bad size, no space, or if the adapter cannot truncate to it
     */
    void truncate(long size) throws IOException;

    /**
     * Allocates, punches or zeroes a range.
     *
     * @param mode what to do
     * @param offset first byte, at least 0
     * @param length bytes, at least 1
     * @param keepSize whether the size stays as it is even if the range passes EOF (always true for
     *     {@link FallocateMode#PUNCH_HOLE})
     * @throws IOException on a bad range, no space, or {@link NotSupportedException}
     */
    void fallocate(FallocateMode mode, long offset, long length, boolean keepSize) throws IOException;

    /**
     * Gives the range private copies of blocks it shares with other files.
     *
     * @param offset first byte
     * @param length bytes
     * @throws IOException on a bad range, no space, or {@link NotSupportedException}
     */
    void unshare(long offset, long length) throws IOException;

    /**
     * Makes {@code [dstOffset, dstOffset + length)} of this file share the blocks of
     * {@code [srcOffset, srcOffset + length)} of {@code source} (reflink). Offsets and length are
     * block aligned, except that a range may end at the source's EOF.
     *
     * @param source the file to share from, of the same filesystem (may be this file, ranges not
     *     overlapping)
     * @param srcOffset first byte in the source
     * @param dstOffset first byte in this file
     * @param length bytes
     * @throws IOException on bad ranges, no space, or {@link NotSupportedException}
     */
    void cloneRange(IomapFile source, long srcOffset, long dstOffset, long length) throws IOException;

    /**
     * Makes data and metadata of this file durable.
     *
     * @throws WritebackException if earlier writes could not be written back
     * @throws IOException on a device error
     */
    void fsync() throws IOException;

    /**
     * Makes data, and the metadata needed to read it back, durable.
     *
     * @throws WritebackException if earlier writes could not be written back
     * @throws IOException on a device error
     */
    void fdatasync() throws IOException;

    /**
     * A shared writable mapping of the file.
     *
     * @return the mapping
     */
    MappedFile map();

    /**
     * @return the file's attributes
     * @throws IOException on a device error
     */
    FileStat stat() throws IOException;

    /** Closes this handle; the last close of an unlinked file frees it. Idempotent. */
    @Override
    void close() throws IOException;
}
