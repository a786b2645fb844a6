package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.iomap.api.IomapFile;
import java.io.IOException;
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
 * <p>{@code keep_cache} is never set: each cached open drops what the kernel cached of the file before,
 * so whatever happened while the file had other names, or through direct opens on an older kernel, is
 * read afresh at the next open.
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
    /** {@code O_ACCMODE} and {@code O_RDONLY} of fcntl.h. */
    static final int O_ACCMODE = 03;
    static final int O_RDONLY = 0;

    private OpenCaching() {
    }

    /**
     * @param file the file just opened, or null if its handle is not known
     * @param flags its open flags
     * @param directIoMount whether the mount is direct I/O with read-only opens caching (else the whole
     *     mount uses the kernel's page cache)
     * @return whether this open must bypass the kernel's page cache; true for null, and for a file whose
     *     link count cannot be read
     */
    static boolean bypasses(IomapFile file, int flags, boolean directIoMount) {
        if (file == null) {
            return true;
        }
        if (directIoMount && ((flags & O_ACCMODE) != O_RDONLY || (flags & FuseBridge.O_DIRECT) != 0)) {
            return true;
        }
        try {
            return file.stat().linkCount() > 1;
        } catch (IOException | RuntimeException e) {
            return true;
        }
    }

    /**
     * Sets or clears {@code direct_io} in an open's {@code struct fuse_file_info}; the other bits stay.
     *
     * @param fileInfo libfuse's {@code struct fuse_file_info}, at least {@code BITS_OFFSET + 4} bytes
     * @param direct whether the open bypasses the kernel's page cache
     */
    static void setDirectIo(MemorySegment fileInfo, boolean direct) {
        int bits = fileInfo.get(JAVA_INT, BITS_OFFSET);
        fileInfo.set(JAVA_INT, BITS_OFFSET, direct ? bits | DIRECT_IO : bits & ~DIRECT_IO);
    }
}
