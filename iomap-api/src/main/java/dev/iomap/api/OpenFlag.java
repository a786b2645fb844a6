package dev.iomap.api;

/**
 * How {@link IomapFileSystem#open(String, java.util.Set)} opens a regular file: the {@code open(2)}
 * flags that change how its reads and writes behave.
 */
public enum OpenFlag {
    /**
     * Direct I/O ({@code O_DIRECT}, the kernel's {@code iomap_dio_rw}): {@link IomapFile#read} and
     * {@link IomapFile#write} move bytes between the caller's buffer and the device without keeping
     * them in the page cache. Needs {@link Capability#DIRECT_IO} (else the open fails with
     * {@link NotSupportedException}).
     *
     * <p>The offset and the buffer's remaining length of every read and write must be multiples of
     * the 512-byte logical sector; anything else fails with {@link InvalidRangeException} (EINVAL)
     * before anything happens. Multiples of the filesystem block size ({@link FsStat#blockSize()}) go
     * straight to the device; a range aligned to the sector but not to the block goes through the
     * page cache, as XFS takes sub-block direct I/O: a write is written back and dropped from the cache
     * before it returns (except on a file written in file order, a sequential zone, where the block
     * rule stays). A read stops at EOF (it returns
     * fewer bytes when the range passes EOF, -1 at or past it; the buffer's bytes past EOF up to the
     * next block boundary are zeroed, the rest untouched); holes and preallocated (unwritten) ranges
     * read as zeroes. Direct and buffered access to the same file stay coherent: dirty cached data
     * over the range is written back before a direct read or write, cached folios over a written range
     * are dropped before and again after it, so a buffered read afterwards sees the new bytes. A
     * write extending the file raises the size only once its data is on the device. A direct write
     * of whole written blocks within EOF writes exactly its bytes to the device (no read, no
     * metadata beyond what the adapter's completion records). Every other operation of the file
     * ({@code fsync}, truncate, fallocate, clone, seek) is as for a buffered open.
     */
    DIRECT,
    /**
     * Synchronous data writes ({@code O_DSYNC}): every {@link IomapFile#write} returns only once its
     * data, and the metadata needed to read it back (allocation, unwritten conversion, size), is
     * durable, as if {@link IomapFile#fdatasync()} had followed it (for a direct write: the adapter's
     * commit and a device flush; the data is never cached). A write error is thrown by that write.
     */
    DSYNC,
    /**
     * Appends ({@code O_APPEND}): every {@link IomapFile#write} goes to the end of the file, whatever
     * {@code pos} it is given (as Linux's {@code pwrite} on an {@code O_APPEND} file does). The end is
     * the size as the filesystem knows it when the write runs, taken under the inode lock (and, on a
     * cluster node, under the file's glock, after the size other nodes left was read), so appends from
     * several threads, open files or cluster nodes never overwrite each other: each lands whole after
     * the ones before it. The write returns the bytes written; the file's size afterwards is at least
     * where they ended. A {@link #DIRECT} append needs a block-aligned size, else it fails with
     * {@link InvalidRangeException} (EINVAL), as on Linux. The only writable open of a file with
     * {@link FileFlag#APPEND}.
     */
    APPEND,
    /**
     * Read only ({@code O_RDONLY}): the file is opened for reading; {@link IomapFile#write},
     * {@link IomapFile#truncate}, {@link IomapFile#fallocate} and the other changes through it are refused
     * with {@link OperationNotPermittedException} (Linux: EBADF). The only open of a file with
     * {@link FileFlag#IMMUTABLE}, and with {@link FileFlag#APPEND} the other one; a file opened without it
     * is open for reading and writing.
     */
    READ_ONLY
}
