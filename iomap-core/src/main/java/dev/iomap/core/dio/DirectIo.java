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
     * @throws InvalidRangeException if {@code pos} or the length is negative or not block aligned
     * @throws IOException from the adapter or the device
     */
    public int read(long pos, ByteBuffer dst) throws IOException {
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
     *     passes the largest file size
     * @throws BadAddressException if reading {@code src} faults before its first whole block (a mapped
     *     file truncated under it: EFAULT); a fault after that makes a short write of the whole blocks
     *     before it, as the kernel's direct write is built from the user pages it could pin
     * @throws IOException from the adapter or the device (the bytes written before the failure are
     *     in place and counted in {@code src}'s position)
     */
    public int write(long pos, ByteBuffer src) throws IOException {
        CachedInode inode = access.inode();
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
