package dev.iomap.core;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * Where the bytes of a buffered write come from. A copy may be short, like a user copy that faults
 * half way: the write path then treats the folio as the kernel does and stops.
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
     * A source reading the remaining bytes of a buffer, advancing its position.
     *
     * @param src the buffer
     * @return the source
     */
    static CopySource of(ByteBuffer src) {
        return new BufferCopySource(src);
    }
}
