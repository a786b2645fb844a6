package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * Where the bytes of a buffered write come from. A copy may be short, like a user copy that faults
 * half way: the write path then treats the folio as the kernel does and stops.
 *
 * <p>A source over memory that can fault (a mapped file truncated under it: the JVM raises an
 * {@link InternalError} for the access) counts how far it got, returns that, and reports the fault
 * through {@link #fault()}, as {@link #of(ByteBuffer)} does; a fault that escapes a source counts as
 * nothing copied (bytes it left in a folio that was already uptodate then stay as the fault left them).
 */
@FunctionalInterface
public interface CopySource {

    /**
     * Copies the next {@code length} bytes of the source into {@code dst} at {@code dstOffset}.
     *
     * @param dst folio memory
     * @param dstOffset byte offset inside {@code dst}
     * @param length bytes wanted
     * @return bytes copied, from 0 to {@code length}; fewer means the source failed or ended
     */
    int copyTo(MemorySegment dst, long dstOffset, int length);

    /**
     * Copies the next {@code length} bytes of the source into {@code folio} at {@code offset}: by
     * default through {@link #copyTo(MemorySegment, long, int)} on the folio's memory; a source that
     * can copy into a folio more cheaply overrides it.
     *
     * @param folio the locked folio
     * @param offset byte offset inside the folio
     * @param length bytes wanted
     * @return bytes copied, from 0 to {@code length}; fewer means the source failed or ended
     */
    default int copyTo(Folio folio, int offset, int length) {
        return copyTo(folio.memory(), offset, length);
    }

    /**
     * Gives back the last {@code bytes} bytes copied: the write kept fewer than were copied (a short copy
     * into a folio that is not uptodate keeps nothing), so they are not written and the source must
     * offer them again (the kernel's {@code iov_iter_revert}). By default nothing happens.
     *
     * @param bytes bytes to give back, at most what the last copy returned
     */
    default void revert(int bytes) {
    }

    /**
     * @return the fault that made a copy of this source come back short (reading the source's memory
     *     faulted: the kernel's EFAULT), or null if none did; by default null
     */
    default Throwable fault() {
        return null;
    }

    /**
     * A source reading the remaining bytes of a buffer, advancing its position by what is copied (and
     * back by what is {@linkplain #revert reverted}). A buffer over faulting memory (a mapped file
     * truncated under it) copies up to the fault and reports it through {@link #fault()}.
     *
     * @param src the buffer
     * @return the source
     */
    static CopySource of(ByteBuffer src) {
        return new BufferCopySource(src);
    }
}
