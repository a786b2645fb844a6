package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * {@link CopySource#of(ByteBuffer)}: the remaining bytes of a buffer, its position advancing by what is
 * copied. Copies without allocating: into a folio through the folio's shared buffer view
 * ({@link #copyTo(Folio, int, int)}), and into a segment straight from a heap buffer's array; only a direct or
 * read-only buffer copied into a bare segment goes through {@link MemorySegment#ofBuffer}.
 *
 * <p>A mapped buffer may fault (its file truncated under it): the copy is then done again in pieces
 * that never cross a page of the buffer, up to the first piece that faults, so that the count returned is
 * exactly the bytes before the faulting page (what the kernel's {@code copy_folio_from_iter_atomic}
 * returns), and {@link #fault()} reports the fault. The JVM may report a fault in compiled code late, at
 * its next safepoint poll ("a fault occurred in a recent unsafe memory access operation"), which could be
 * after this copy returned; so every copy from a mapped buffer ends with a native call
 * ({@link #deliverPendingFault()}), whose return delivers a pending fault inside the copy's own handler.
 */
final class BufferCopySource implements CopySource {
    /**
     * The smallest page size: a piece aligned to it lies within one page of every page size Linux uses
     * (4, 16 or 64 KiB), so a fault stops the pieces exactly at a page.
     */
    private static final int PIECE = 4096;

    private final ByteBuffer src;
    /** Whether {@link #src} maps a file, and so may fault. */
    private final boolean mapped;
    private Throwable fault;

    /** @param src the buffer, read from its position */
    BufferCopySource(ByteBuffer src) {
        this.src = src;
        this.mapped = src.isDirect() && MemorySegment.ofBuffer(src).isMapped();
    }

    @Override
    public int copyTo(MemorySegment dst, long dstOffset, int length) {
        int n = Math.min(length, src.remaining());
        if (src.hasArray()) {
            MemorySegment.copy(src.array(), src.arrayOffset() + src.position(), dst, ValueLayout.JAVA_BYTE,
                    dstOffset, n);
        } else {
            try {
                MemorySegment.copy(MemorySegment.ofBuffer(src), 0, dst, dstOffset, n);
                deliverPendingFault();
            } catch (InternalError e) {
                n = copyUpToFault(e, n, (from, bytes) ->
                        MemorySegment.copy(MemorySegment.ofBuffer(src), from, dst, dstOffset + from, bytes));
            }
        }
        src.position(src.position() + n);
        return n;
    }

    /**
     * Copies into the folio's {@link Folio#copyView()} with one absolute bulk put: no allocation. The
     * view may be shared with other folios, so the range is checked against the folio here.
     */
    @Override
    public int copyTo(Folio folio, int offset, int length) {
        int n = Math.min(length, src.remaining());
        Objects.checkFromIndexSize(offset, n, folio.size());
        ByteBuffer view = folio.copyView();
        int at = folio.copyIndex(offset);
        try {
            view.put(at, src, src.position(), n);
            deliverPendingFault();
        } catch (InternalError e) {
            n = copyUpToFault(e, n, (from, bytes) -> view.put(at + from, src, src.position() + from, bytes));
        }
        src.position(src.position() + n);
        return n;
    }

    /** Moves the position back by {@code bytes}. */
    @Override
    public void revert(int bytes) {
        src.position(src.position() - bytes);
    }

    @Override
    public Throwable fault() {
        return fault;
    }

    /** Copies {@code bytes} bytes from {@code from} bytes past the buffer's position to the same offset at the destination. */
    @FunctionalInterface
    private interface Piece {
        void copy(int from, int bytes);
    }

    /**
     * After {@code failure} stopped a copy of {@code n} bytes: rethrows it unless it is a faulting memory
     * access, else copies again piece by piece up to the first piece that faults, records the fault and
     * returns the bytes copied.
     */
    private int copyUpToFault(InternalError failure, int n, Piece piece) {
        if (!SourceFaults.isAccessFault(failure)) {
            throw failure;
        }
        fault = failure;
        long address = MemorySegment.ofBuffer(src).address();
        int done = 0;
        while (done < n) {
            int bytes = (int) Math.min(n - done, PIECE - ((address + done) & (PIECE - 1)));
            try {
                piece.copy(done, bytes);
                deliverPendingFault();
            } catch (InternalError again) {
                if (!SourceFaults.isAccessFault(again)) {
                    throw again;
                }
                break;
            }
            done += bytes;
        }
        return done;
    }

    /**
     * For a mapped buffer, {@link SourceFaults#deliverPending()}: a fault the JVM holds pending from the
     * copy just made is thrown here rather than wherever compiled code next polls. Nothing for other
     * buffers, which cannot fault.
     */
    private void deliverPendingFault() {
        if (mapped) {
            SourceFaults.deliverPending();
        }
    }
}
