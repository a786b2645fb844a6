package dev.iomap.spi;

import java.io.IOException;
import java.io.Serial;

/**
 * Thrown by {@link IomapOps#begin} for a direct write ({@link IomapRequest#DIRECT} with
 * {@link IomapRequest#WRITE}) to say that the range from {@code pos} on must go through the page
 * cache instead: the kernel's {@code -ENOTBLK} from {@code iomap_begin}, with which GFS2 sends
 * allocating and extending direct writes to {@code direct_write_fallback}.
 *
 * <p>The adapter has changed nothing for this call (as for any exception from {@code begin}). The
 * core completes the direct part already submitted, then writes the rest of the range buffered,
 * writes that back and waits for it, and drops the cache over it, so the caller sees a direct write
 * either way (the data is on the device when the write returns, and not cached). If the core held the
 * inode lock shared (a write reported as a pure overwrite), it takes it exclusively for the fallback.
 */
public class DirectFallbackException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message why the range cannot be written directly */
    public DirectFallbackException(String message) {
        super(message);
    }
}
