package dev.iomap.api;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

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
     * @return the flags this file was opened with ({@link IomapFileSystem#open(String, java.util.Set)}):
     *     {@link OpenFlag#DIRECT} makes {@link #read} and {@link #write} direct I/O with the alignment
     *     rules given there; empty for a plain open (the default)
     */
    default java.util.Set<OpenFlag> openFlags() {
        return java.util.Set.of();
    }

    /**
     * Opens this file's inode again, as opening {@code /proc/self/fd/N} does on Linux: a new open file with
     * its own flags, checked as {@link IomapFileSystem#open(String, java.util.Set)} checks them, closed on
     * its own, and possible also when the inode has no name left (unlinked while open), which no path can
     * reach. This default: refused.
     *
     * @param flags the new open's flags
     * @return the new open file
     * @throws java.nio.channels.ClosedChannelException if this file is closed
     * @throws NotSupportedException if the file system cannot (this default), or for a flag as at open
     * @throws IOException as an open ({@link OperationNotPermittedException} for an immutable file's
     *     writable open, ...)
     */
    default IomapFile reopen(java.util.Set<OpenFlag> flags) throws IOException {
        throw new NotSupportedException("this file system cannot open a file again by its handle");
    }

    /**
     * Reads from {@code pos} into {@code dst}, up to EOF.
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go; its position advances
     * @return bytes read, or -1 if {@code pos} is at or past EOF
     * @throws IOException on a bad offset or a device error; for a {@link OpenFlag#DIRECT} open,
     *     {@link InvalidRangeException} if {@code pos} or {@code dst.remaining()} is not block aligned
     */
    int read(long pos, ByteBuffer dst) throws IOException;

    /**
     * Writes all remaining bytes of {@code src} at {@code pos}, growing the file if needed.
     *
     * @param pos file offset, at least 0; an {@link OpenFlag#APPEND} open writes at the end of the file instead
     * @param src the bytes; its position advances by the bytes written
     * @return bytes written: all of them, or fewer only if reading {@code src} faulted part way (a
     *     mapped buffer whose file was truncated under it): then the bytes before the fault, as far as
     *     the engine could keep them (the kernel's short write)
     * @throws BadAddressException if reading {@code src} faulted before any byte was written (the kernel's
     *     EFAULT); the file is unchanged
     * @throws IOException on a bad range, no space, or an operation the adapter refuses (e.g. a write
     *     not at EOF on an append-only file); for a {@link OpenFlag#DIRECT} open,
     *     {@link InvalidRangeException} if {@code pos} or {@code src.remaining()} is not block aligned,
     *     and a device error of the write itself (it is not deferred to fsync)
     */
    int write(long pos, ByteBuffer src) throws IOException;

    /**
     * {@link #read(long, ByteBuffer)} with per-call flags ({@code preadv2(2)}).
     *
     * <p>This default takes no flag: it refuses any, as the kernel refuses {@code RWF_DONTCACHE} with
     * {@code EOPNOTSUPP} on a file whose filesystem does not support it; the iomap engine overrides it.
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go; its position advances
     * @param flags the call's flags, possibly none
     * @return bytes read, or -1 if {@code pos} is at or past EOF
     * @throws NotSupportedException if a flag is not supported by this file
     * @throws IOException as {@link #read(long, ByteBuffer)}
     */
    default int read(long pos, ByteBuffer dst, java.util.Set<RwFlag> flags) throws IOException {
        checkNoFlags("read", flags);
        return read(pos, dst);
    }

    /**
     * {@link #write(long, ByteBuffer)} with per-call flags ({@code pwritev2(2)}).
     *
     * <p>This default takes no flag: it refuses any, as {@link #read(long, ByteBuffer, java.util.Set)}
     * does; the iomap engine overrides it.
     *
     * @param pos file offset, at least 0
     * @param src the bytes; its position advances by the bytes written
     * @param flags the call's flags, possibly none
     * @return bytes written, as {@link #write(long, ByteBuffer)}
     * @throws NotSupportedException if a flag is not supported by this file
     * @throws IOException as {@link #write(long, ByteBuffer)}
     */
    default int write(long pos, ByteBuffer src, java.util.Set<RwFlag> flags) throws IOException {
        checkNoFlags("write", flags);
        return write(pos, src);
    }

    /** The refusal of the defaults of the per-call flag methods. */
    private static void checkNoFlags(String what, java.util.Set<RwFlag> flags) throws NotSupportedException {
        if (!flags.isEmpty()) {
            throw new NotSupportedException(what + ": this file does not support the per-call flags " + flags
                    + "; call it without them");
        }
    }

    /**
     * Writes all remaining bytes of {@code src} at {@code pos} as one atomic write: Linux's
     * {@code pwritev2(fd, iov, 1, pos, RWF_ATOMIC)} on an {@code O_DIRECT} file. After any crash a
     * read of {@code [pos, pos + src.remaining())} returns all the old bytes or all the new ones,
     * never a mix; the write is durable only once {@link #fdatasync} returned (or at once for a
     * {@link OpenFlag#DSYNC} open), as any direct write. It is never short: all of it, or nothing and
     * an exception.
     *
     * <p>The rules, as the kernel's: the file was opened {@link OpenFlag#DIRECT} (atomic writes are
     * direct I/O only), the length is a power of two between the file's
     * {@link FileStat#atomicWrite() unit min and max}, and the offset is a multiple of the length (of
     * the size, for an {@link OpenFlag#APPEND} open); one buffer is one segment.
     *
     * <p>This default refuses, as the kernel does for a file without {@code FMODE_CAN_ATOMIC_WRITE};
     * the iomap engine overrides it.
     *
     * @param pos file offset, at least 0
     * @param src the bytes; its position advances by all of them once written
     * @return bytes written: all of them
     * @throws AtomicWriteException (EINVAL) naming the rule the length or offset breaks; nothing written
     * @throws NotSupportedException (EOPNOTSUPP) if the filesystem does not declare
     *     {@link Capability#ATOMIC_WRITES}, or the file was not opened {@link OpenFlag#DIRECT}
     * @throws BadAddressException if reading any byte of {@code src} faults; nothing written
     * @throws IOException on no space or a device error; the range then holds the old bytes
     */
    default int writeAtomic(long pos, ByteBuffer src) throws IOException {
        throw new NotSupportedException("atomic write of " + src.remaining() + " bytes at " + pos
                + ": this file takes no atomic writes (EOPNOTSUPP)");
    }

    /**
     * The first offset at or after {@code offset} that holds data: {@code lseek(fd, offset, SEEK_DATA)}.
     *
     * <p>Data is what the filesystem has written or reserved for the file, and what the page cache
     * holds for it that is not yet written back; a hole reads as zeroes and holds nothing. The answer
     * is exact where the filesystem knows (data is never reported as a hole) but may report a hole as
     * data, as {@code lseek(2)} allows: at worst the whole file is data. Preallocated (unwritten) space
     * is a hole until written, except where the page cache holds valid data over it (even zeroes
     * read from it), as in the kernel.
     *
     * <p>This default reports the whole file as data, as the kernel's generic {@code lseek} does for a
     * filesystem that does not know its holes; the iomap engine overrides it.
     *
     * @param offset where to start, at least 0
     * @return {@code offset} if it is in data, else the start of the next data, always below the size
     * @throws InvalidRangeException if {@code offset} is negative
     * @throws NoDataException if {@code offset} is at or past EOF, or only holes follow it
     * @throws IOException on a device or adapter error
     */
    default long seekData(long offset) throws IOException {
        long size = size();
        checkSeek("seek data", offset, size);
        return offset;
    }

    /**
     * The first offset at or after {@code offset} that is in a hole: {@code lseek(fd, offset, SEEK_HOLE)}.
     * EOF counts as the start of a hole, so every file has one.
     *
     * <p>What counts as data and as a hole is as for {@link #seekData}: a hole may be reported late
     * (part of it reported as data), never early.
     *
     * <p>This default reports the whole file as data (the hole is at EOF), as the kernel's generic
     * {@code lseek} does; the iomap engine overrides it.
     *
     * @param offset where to start, at least 0
     * @return {@code offset} if it is in a hole, else the start of the next hole, at most the size
     * @throws InvalidRangeException if {@code offset} is negative
     * @throws NoDataException if {@code offset} is at or past EOF
     * @throws IOException on a device or adapter error
     */
    default long seekHole(long offset) throws IOException {
        long size = size();
        checkSeek("seek hole", offset, size);
        return size;
    }

    /** The argument checks of the default {@link #seekData} and {@link #seekHole}. */
    private static void checkSeek(String what, long offset, long size) throws IomapException {
        if (offset < 0) {
            throw new InvalidRangeException(what + ": negative offset " + offset);
        }
        if (offset >= size) {
            throw new NoDataException(what + ": offset " + offset + " is at or past EOF (size " + size + ")");
        }
    }

    /**
     * Where the file's data lives: {@code ioctl(FS_IOC_FIEMAP)}, the kernel's {@code iomap_fiemap}.
     *
     * <p>Reports the extents that hold data in {@code [offset, offset + length)}, clamped to the
     * size rounded up to a block (preallocated space past EOF is not reported), in file order, holes
     * left out. Each extent is what the filesystem maps there: {@link FileExtent.Flag#UNWRITTEN} for
     * preallocated space, {@link FileExtent.Flag#SHARED} for blocks shared with another file,
     * {@link FileExtent.Flag#DATA_INLINE} (with {@code NOT_ALIGNED}, address 0) for data stored in the
     * inode, and {@link FileExtent.Flag#DELALLOC} (with {@code UNKNOWN}, address 0) for data that has
     * no blocks yet: space reserved by delayed allocation, or data in the page cache over a hole that
     * the filesystem allocates only at writeback. The last extent reported has
     * {@link FileExtent.Flag#LAST}. Adjacent extents are not merged: the report shows the
     * filesystem's own mapping units.
     *
     * <p>With {@code sync} the file's dirty data is written back first ({@code FIEMAP_FLAG_SYNC}, what
     * {@code xfs_io -c fiemap} asks for), so delayed allocations have their blocks.
     *
     * <p>This default refuses, as the kernel does for a filesystem without {@code fiemap}; the iomap
     * engine overrides it.
     *
     * @param offset first byte, at least 0
     * @param length bytes, at least 0 ({@code Long.MAX_VALUE - offset} or more means to EOF)
     * @param sync whether to write back dirty data first
     * @return the extents, possibly none
     * @throws InvalidRangeException for a negative offset or length
     * @throws NotSupportedException if the filesystem cannot report its extents
     * @throws IOException on a device or adapter error
     */
    default List<FileExtent> fiemap(long offset, long length, boolean sync) throws IOException {
        InvalidRangeException.checkRange("fiemap", offset, Math.min(length, Long.MAX_VALUE - offset), Long.MAX_VALUE);
        throw new NotSupportedException("fiemap: this file cannot report its extents");
    }

    /**
     * The whole file's extents after writing back its dirty data: {@code fiemap(0, Long.MAX_VALUE, true)}.
     *
     * @return the extents, possibly none
     * @throws NotSupportedException if the filesystem cannot report its extents
     * @throws IOException on a device or adapter error
     */
    default List<FileExtent> fiemap() throws IOException {
        return fiemap(0, Long.MAX_VALUE, true);
    }

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
