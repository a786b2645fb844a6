package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

/**
 * Which opens use the kernel's page cache, chosen per open and set in the reply to open and create
 * ({@code fuse_file_info.direct_io}, which jfuse 0.7.3 cannot set), on a mount that chooses per open
 * ({@link FuseBridge#perOpenCaching}).
 *
 * <p>The rule ({@link #bypasses}): a file with more than one name always bypasses the cache (libfuse's
 * high-level API gives each name its own kernel inode, so one name's cached pages would not see writes
 * through another). On a direct-I/O mount whose read-only opens may cache ({@link FuseBridge#readCache},
 * the default), every open that may write ({@code O_WRONLY}, {@code O_RDWR}) and every {@code O_DIRECT}
 * open bypasses it too: writes reach the file system at once, one request per {@code write()} as
 * before, and Linux (6.6 and later) drops the pages a direct write covers from the inode's cache before
 * it sends the write, so that a read-only open reading from the cache afterwards sees the new data. On
 * a mount without direct I/O every other open caches.
 *
 * <p>{@code keep_cache} is set for a cached open of a file that has had one name all the time it was
 * mounted ({@link FuseBridge#keepsKernelCache}), so that the kernel's cache outlives a close (a file read
 * again and again is read from the kernel): every change of such a file went through its one kernel
 * inode, and the kernel dropped or updated its pages for each. A file that has had two names since the
 * mount (seen at an open, or made by {@code link()}) never keeps them: what its name cached may predate
 * writes through the other name, and each open drops it.
 */
final class OpenCaching {
    /**
     * Byte offset of the bit-field word after {@code int flags} in {@code struct fuse_file_info}
     * (fuse_common.h: {@code writepage}, {@code direct_io}, {@code keep_cache}, ... from bit 0, as GCC
     * allocates bit-fields on little-endian amd64 and aarch64).
     */
    static final long BITS_OFFSET = 4;
    /** {@code direct_io}: bit 1. */
    static final int DIRECT_IO = 1 << 1;
    /** {@code keep_cache}: bit 2. */
    static final int KEEP_CACHE = 1 << 2;
    /** {@code O_ACCMODE} and {@code O_RDONLY} of fcntl.h. */
    static final int O_ACCMODE = 03;
    static final int O_RDONLY = 0;

    private OpenCaching() {
    }

    /**
     * @param flags the open flags
     * @param linkCount the file's names
     * @param directIoMount whether the mount is direct I/O with read-only opens caching (else the whole
     *     mount uses the kernel's page cache)
     * @return whether this open must bypass the kernel's page cache
     */
    static boolean bypasses(int flags, int linkCount, boolean directIoMount) {
        if (directIoMount && ((flags & O_ACCMODE) != O_RDONLY || (flags & FuseBridge.O_DIRECT) != 0)) {
            return true;
        }
        return linkCount > 1;
    }

    /**
     * Sets {@code direct_io} and {@code keep_cache} in an open's {@code struct fuse_file_info}; the other
     * bits stay.
     *
     * @param fileInfo libfuse's {@code struct fuse_file_info}, at least {@code BITS_OFFSET + 4} bytes
     * @param direct whether the open bypasses the kernel's page cache
     * @param keep whether the kernel may keep what it cached of the file before this open
     */
    static void set(MemorySegment fileInfo, boolean direct, boolean keep) {
        int bits = fileInfo.get(JAVA_INT, BITS_OFFSET) & ~(DIRECT_IO | KEEP_CACHE);
        fileInfo.set(JAVA_INT, BITS_OFFSET, bits | (direct ? DIRECT_IO : 0) | (keep ? KEEP_CACHE : 0));
    }
}
