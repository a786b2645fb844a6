package dev.iomap.core.dio;

import dev.iomap.core.trace.DioCompleteEvent;
import dev.iomap.core.trace.DioRwBeginEvent;
import dev.iomap.api.AtomicWriteLimits;
import dev.iomap.api.BadAddressException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.core.CachedInode;
import dev.iomap.core.DirectIoAccess;
import dev.iomap.core.SourceFaults;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Direct reads and writes of one file: the kernel's {@code iomap_dio_rw} as a filesystem's
 * {@code read_iter} and {@code write_iter} call it for an {@code O_DIRECT} file. See
 * {@link dev.iomap.api.OpenFlag#DIRECT} for the contract callers see and
 * {@link dev.iomap.spi.IomapRequest#DIRECT} for the adapter's part.
 *
 * <p>Thread-safe: reads hold the inode lock shared, overwrites within EOF too, every other write
 * holds it exclusively. The caller brackets each call with what the filesystem adds around it
 * (cluster lock, timestamps, synchronous-write commit).
 */
public final class DirectIo {
    /**
     * The logical sector size (a block device's {@code logical_block_size}): direct I/O must be aligned
     * to it; aligned to it but not to the block, it goes through the page cache.
     */
    public static final int SECTOR_SIZE = 512;

    private final DirectIoAccess access;

    /** @param inode the file */
    public DirectIo(CachedInode inode) {
        this.access = new DirectIoAccess(inode);
    }

    /**
     * Reads {@code dst.remaining()} bytes at {@code pos} straight from the device, or up to EOF.
     *
     * @param pos file offset, a multiple of the block size
     * @param dst where the bytes go; its remaining length a multiple of the block size; its position
     *     advances by the bytes read
     * @return bytes read (fewer at EOF, 0 for an empty buffer), or -1 if {@code pos} is at or past EOF
     * @throws InvalidRangeException if {@code pos} or the length is negative or not block aligned (a
     *     range aligned to the {@link #SECTOR_SIZE logical sector} but not to the block is read through
     *     the page cache instead, as XFS takes sub-block direct I/O)
     * @throws IOException from the adapter or the device
     */
    public int read(long pos, ByteBuffer dst) throws IOException {
        if (subBlock("direct read", pos, dst.remaining(), Long.MAX_VALUE)) {
            // through the cache, which has the blocks around it (the device is read in whole blocks)
            DioRwBeginEvent.emit(access.inode(), pos, dst.remaining(), false);
            return DioCompleteEvent.emitReturning(access.inode(), pos, access.inode().read(pos, dst));
        }
        check("direct read", pos, dst.remaining(), Long.MAX_VALUE);
        if (!dst.hasRemaining()) {
            return pos >= access.inode().size() ? -1 : 0;
        }
        DioRwBeginEvent.emit(access.inode(), pos, dst.remaining(), false);
        return DioCompleteEvent.emitReturning(access.inode(), pos, DirectRead.read(access, pos, dst));
    }

    /**
     * Writes all of {@code src} at {@code pos} straight to the device.
     *
     * @param pos file offset, a multiple of the block size
     * @param src the bytes, a multiple of the block size; its position advances by the bytes written
     * @return bytes written
     * @throws InvalidRangeException if {@code pos} or the length is negative, not block aligned, or
     *     passes the largest file size (a range aligned to the {@link #SECTOR_SIZE logical sector} but not
     *     to the block is written through the page cache instead, written back and dropped before this
     *     returns, as XFS takes sub-block direct I/O; not on a file written in file order)
     * @throws BadAddressException if reading {@code src} faults before its first whole block (a mapped
     *     file truncated under it: EFAULT); a fault after that makes a short write of the whole blocks
     *     before it, as the kernel's direct write is built from the user pages it could pin
     * @throws IOException from the adapter or the device (the bytes written before the failure are
     *     in place and counted in {@code src}'s position)
     */
    public int write(long pos, ByteBuffer src) throws IOException {
        CachedInode inode = access.inode();
        if (subBlock("direct write", pos, src.remaining(), inode.maxFileSize())) {
            return subBlockWrite(pos, src);
        }
        check("direct write", pos, src.remaining(), inode.maxFileSize());
        if (!src.hasRemaining()) {
            return 0;
        }
        DioRwBeginEvent.emit(inode, pos, src.remaining(), true);
        int readable = SourceFaults.readablePrefix(src);
        if (readable == src.remaining()) {
            return DioCompleteEvent.emitReturning(inode, pos, DirectWrite.write(access, pos, src, false));
        }
        int usable = readable / inode.blockSize() * inode.blockSize();
        if (usable == 0) {
            throw new BadAddressException("direct write of " + src.remaining() + " bytes at " + pos + " to inode "
                    + inode.ino() + ": reading the source faults at byte " + readable
                    + ", before its first whole block (EFAULT)", null);
        }
        ByteBuffer part = src.duplicate().limit(src.position() + usable);
        int written = DirectWrite.write(access, pos, part, false);
        src.position(src.position() + written);
        return DioCompleteEvent.emitReturning(inode, pos, written);
    }

    /**
     * Writes all of {@code src} at {@code pos} as one atomic write ({@code RWF_ATOMIC}): mapped with
     * {@link dev.iomap.spi.IomapRequest#ATOMIC} under the exclusive inode lock, completed with one
     * {@link dev.iomap.spi.WritebackOps#atomicWriteCompleted}. All of it, or nothing.
     *
     * @param pos file offset
     * @param src the bytes; its position advances by all of them once written, not at all on failure
     * @param limits the file's atomic write limits
     * @return bytes written: all of them
     * @throws dev.iomap.api.AtomicWriteException if the length or offset breaks a rule of {@code limits}
     * @throws InvalidRangeException if the range passes the largest file size
     * @throws BadAddressException if reading any byte of {@code src} faults (EFAULT); nothing written
     * @throws IOException from the adapter or the device; the file shows none of the write
     */
    public int writeAtomic(long pos, ByteBuffer src, AtomicWriteLimits limits) throws IOException {
        CachedInode inode = access.inode();
        limits.check("atomic write to inode " + inode.ino(), pos, src.remaining());
        check("atomic write", pos, src.remaining(), inode.maxFileSize());
        int readable = SourceFaults.readablePrefix(src);
        if (readable != src.remaining()) {
            throw new BadAddressException("atomic write of " + src.remaining() + " bytes at " + pos + " to inode "
                    + inode.ino() + ": reading the source faults at byte " + readable + " (EFAULT)", null);
        }
        DioRwBeginEvent.emit(inode, pos, src.remaining(), true);
        return DioCompleteEvent.emitReturning(inode, pos, DirectWrite.write(access, pos, src, true));
    }

    /**
     * Whether a direct I/O is aligned to the {@link #SECTOR_SIZE logical sector} but not to the block:
     * XFS takes those (its sub-block direct I/O), and so does this class, through the page cache. Not
     * for a file whose writeback goes in file order (a sequential zone), which keeps the block rule.
     */
    private boolean subBlock(String what, long pos, long length, long maxEnd) throws InvalidRangeException {
        CachedInode inode = access.inode();
        long blockMask = inode.blockSize() - 1L;
        if (((pos | length) & blockMask) == 0 || ((pos | length) & (SECTOR_SIZE - 1)) != 0) {
            return false;
        }
        InvalidRangeException.checkRange(what + " of inode " + inode.ino(), pos, length, maxEnd);
        return !access.writesInFileOrder();
    }

    /**
     * A direct write aligned to the logical sector but not to the block: written through the cache,
     * written back, waited for and dropped under the exclusive inode lock (the kernel's
     * {@code direct_write_fallback}), so that the bytes are on the device when it returns and nothing of
     * the range stays cached. All of it or, on a failure, an exception; a source that faults is refused
     * whole (EFAULT).
     */
    private int subBlockWrite(long pos, ByteBuffer src) throws IOException {
        CachedInode inode = access.inode();
        int length = src.remaining();
        if (SourceFaults.readablePrefix(src) != length) {
            throw new BadAddressException("direct write of " + length + " bytes at " + pos + " to inode " + inode.ino()
                    + ": reading the source faults (EFAULT)", null);
        }
        DioRwBeginEvent.emit(inode, pos, length, true);
        access.lockExclusive();
        try {
            IOException failure = BufferedFallback.write(access, pos, src.slice(src.position(), length));
            if (failure != null) {
                throw failure;
            }
        } finally {
            access.unlockExclusive();
        }
        src.position(src.position() + length);
        return DioCompleteEvent.emitReturning(inode, pos, length);
    }

    private void check(String what, long pos, long length, long maxEnd) throws InvalidRangeException {
        CachedInode inode = access.inode();
        String name = what + " of inode " + inode.ino();
        InvalidRangeException.checkRange(name, pos, length, maxEnd);
        long mask = inode.blockSize() - 1L;
        if ((pos & mask) != 0 || (length & mask) != 0) {
            throw new InvalidRangeException(name + ": offset " + pos + " and length " + length
                    + " must be multiples of the block size " + inode.blockSize() + " (EINVAL)");
        }
    }
}
