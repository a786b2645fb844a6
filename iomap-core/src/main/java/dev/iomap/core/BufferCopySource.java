package dev.iomap.core;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * {@link CopySource#of(ByteBuffer)}: the remaining bytes of a buffer, its position advancing by what is
 * copied. Copies without allocating: into a folio through the folio's shared buffer view
 * ({@link #copyTo(Folio, int, int)}), and into a segment straight from a heap buffer's array; only a direct or
 * read-only buffer copied into a bare segment goes through {@link MemorySegment#ofBuffer}.
 */
final class BufferCopySource implements CopySource {
    private final ByteBuffer src;

    /** @param src the buffer, read from its position */
    BufferCopySource(ByteBuffer src) {
        this.src = src;
    }

    @Override
    public int copyTo(MemorySegment dst, long dstOffset, int length) {
        int n = Math.min(length, src.remaining());
        if (src.hasArray()) {
            MemorySegment.copy(src.array(), src.arrayOffset() + src.position(), dst, ValueLayout.JAVA_BYTE,
                    dstOffset, n);
        } else {
            MemorySegment.copy(MemorySegment.ofBuffer(src), 0, dst, dstOffset, n);
        }
        src.position(src.position() + n);
        return n;
    }

    /** Copies into the folio's {@link Folio#sharedView()} with one absolute bulk put: no allocation. */
    @Override
    public int copyTo(Folio folio, int offset, int length) {
        int n = Math.min(length, src.remaining());
        folio.sharedView().put(offset, src, src.position(), n);
        src.position(src.position() + n);
        return n;
    }
}
