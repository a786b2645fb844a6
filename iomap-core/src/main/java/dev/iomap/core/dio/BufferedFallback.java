package dev.iomap.core.dio;

import dev.iomap.api.IomapException;
import dev.iomap.core.CopySource;
import dev.iomap.core.DirectIoAccess;
import dev.iomap.core.mm.WritebackError;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The rest of a direct write that the adapter sent to the page cache
 * ({@link dev.iomap.spi.DirectFallbackException}): the kernel's {@code direct_write_fallback}, which
 * writes buffered, then {@code filemap_write_and_wait_range} and {@code invalidate_mapping_pages}, so
 * the caller still gets data on the device and nothing cached.
 */
final class BufferedFallback {

    private BufferedFallback() {
    }

    /**
     * Writes {@code data} at {@code pos} through the cache, writes it back, waits, and drops it.
     * Caller holds the inode lock exclusively.
     *
     * @return the error, or null if all of it reached the device
     */
    static IOException write(DirectIoAccess access, long pos, ByteBuffer data) {
        long end = pos + data.remaining();
        WritebackError errors = access.inode().writebackError();
        long seen = errors.sample();
        try {
            long written = access.inode().write(pos, CopySource.of(data.duplicate()), data.remaining());
            if (written != end - pos) {
                return new IomapException("buffered fallback of a direct write to inode " + access.inode().ino()
                        + " at " + pos + " wrote " + written + " of " + (end - pos) + " bytes");
            }
        } catch (IOException e) {
            return e;
        }
        access.inode().writeAndWait(pos, end);
        IOException failed = errors.since(seen);
        access.dropCleanRange(pos, end);
        return failed;
    }
}
