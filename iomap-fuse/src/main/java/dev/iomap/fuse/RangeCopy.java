package dev.iomap.fuse;

import dev.iomap.api.Capability;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * copy_file_range(2) between two open files of one file system, as the kernel's local filesystems do
 * it: shared blocks where the file system can clone ({@link Capability#CLONE}) and the range allows,
 * a copy of the bytes otherwise.
 *
 * <p>The length is cut at the source's EOF (nothing is copied at or past it). Where both offsets are
 * block aligned, {@link IomapFile#cloneRange} shares the whole blocks of the range, and also the last
 * partial block when the range ends at the source's EOF and reaches or passes the destination's EOF
 * (as {@code FICLONERANGE} allows: nothing of the destination past the range is covered); the rest is
 * read and written. Overlapping ranges of one file are EINVAL, as the kernel's
 * {@code generic_copy_file_checks}.
 */
final class RangeCopy {
    /** The bytes read and written at a time where blocks are not shared. */
    static final int CHUNK = 1 << 20;

    private RangeCopy() {
    }

    /**
     * @param fs the file system both files belong to
     * @param in the source
     * @param offsetIn where to read from
     * @param out the destination
     * @param offsetOut where to write to
     * @param size bytes asked for
     * @return bytes copied, or a negated errno (EINVAL for a negative offset or size, or overlapping
     *     ranges of one file)
     * @throws IOException as the file system's reads, writes and clones
     */
    static long copy(IomapFileSystem fs, IomapFile in, long offsetIn, IomapFile out, long offsetOut, long size)
            throws IOException {
        if (offsetIn < 0 || offsetOut < 0 || size < 0) {
            return -LinuxErrno.EINVAL;
        }
        long sourceSize = in.size();
        if (offsetIn >= sourceSize || size == 0) {
            return 0;
        }
        long length = Math.min(size, sourceSize - offsetIn);
        if (in.stat().ino() == out.stat().ino() && offsetIn < offsetOut + length && offsetOut < offsetIn + length) {
            return -LinuxErrno.EINVAL;
        }
        long cloned = 0;
        if (fs.capabilities().contains(Capability.CLONE)) {
            long block = fs.statfs().blockSize();
            if (offsetIn % block == 0 && offsetOut % block == 0) {
                boolean toEof = offsetIn + length == sourceSize && offsetOut + length >= out.size();
                cloned = toEof ? length : length - length % block;
                if (cloned > 0) {
                    out.cloneRange(in, offsetIn, offsetOut, cloned);
                }
            }
        }
        return cloned + copyBytes(in, offsetIn + cloned, out, offsetOut + cloned, length - cloned);
    }

    private static long copyBytes(IomapFile in, long offsetIn, IomapFile out, long offsetOut, long length)
            throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(CHUNK, Math.max(length, 1)));
        long done = 0;
        while (done < length) {
            buffer.clear().limit((int) Math.min(buffer.capacity(), length - done));
            int n = in.read(offsetIn + done, buffer);
            if (n <= 0) {
                break;
            }
            buffer.flip();
            while (buffer.hasRemaining()) {
                out.write(offsetOut + done + buffer.position(), buffer);
            }
            done += n;
        }
        return done;
    }
}
