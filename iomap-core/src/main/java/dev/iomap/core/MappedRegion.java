package dev.iomap.core;

import dev.iomap.api.InvalidRangeException;
import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.FolioState;
import dev.iomap.core.mm.PageCache;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;

/**
 * A shared writable mapping of a file, standing in for {@code mmap(MAP_SHARED)}: loads and stores go
 * straight to folio memory. Every store into a folio is a write fault: the folio is read in,
 * the adapter is asked for space ({@code begin} with {@code WRITE} and {@code FAULT}, the kernel's
 * {@code iomap_page_mkwrite}) and only the blocks inside EOF are marked dirty. A store may reach
 * past EOF inside the last page, as with mmap, but those bytes are never written back; a store
 * beyond the last page of the file is refused, where mmap would raise SIGBUS.
 *
 * <p>Thread-safe: each access takes the inode lock shared (excluding truncate) and the folio lock.
 */
public final class MappedRegion {
    private static final Set<IomapRequest> FAULT = EnumSet.of(IomapRequest.WRITE, IomapRequest.FAULT);

    private final IomapContext inode;

    MappedRegion(IomapContext inode) {
        this.inode = inode;
    }

    /**
     * Stores the remaining bytes of {@code src} at file offset {@code pos}, taking the write fault on
     * each folio it touches (the kernel's {@code iomap_page_mkwrite}, which runs only for the first store
     * after the folio was last cleaned).
     *
     * @param pos file offset, at least 0
     * @param src the bytes; its position advances
     * @throws InvalidRangeException if a byte falls beyond the last page of the file
     * @throws IOException from the adapter or the device
     */
    public void store(long pos, ByteBuffer src) throws IOException {
        access(pos, src, true);
    }

    /**
     * Loads bytes at {@code pos} into {@code dst}, including the zeroes past EOF in the last page.
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go; its position advances
     * @throws InvalidRangeException if a byte falls beyond the last page of the file
     * @throws IOException from the adapter or the device
     */
    public void load(long pos, ByteBuffer dst) throws IOException {
        access(pos, dst, false);
    }

    private void access(long pos, ByteBuffer buffer, boolean store) throws IOException {
        InvalidRangeException.checkRange("mapped access to inode " + inode.ino(), pos, buffer.remaining(),
                Long.MAX_VALUE);
        inode.lockShared();
        try {
            PageCache cache = inode.pageCache();
            long pageMask = cache.options().pageSize() - 1L;
            long mappable = (inode.size() + pageMask) & ~pageMask;
            if (pos + buffer.remaining() > mappable) {
                throw new InvalidRangeException("mapped access [" + pos + ", +" + buffer.remaining()
                        + ") passes the last page of inode " + inode.ino() + " (size " + inode.size() + ")");
            }
            while (buffer.hasRemaining()) {
                Folio folio = cache.grabLocked(pos >>> cache.pageShift(), 0);
                try {
                    inode.reader().readFolio(folio);
                    int offset = (int) (pos - folio.pos());
                    int n = Math.min(buffer.remaining(), folio.size() - offset);
                    MemorySegment bytes = MemorySegment.ofBuffer(buffer);
                    if (store) {
                        storeInto(folio, offset, bytes, n);
                    } else {
                        MemorySegment.copy(folio.memory(), offset, bytes, 0, n);
                    }
                    buffer.position(buffer.position() + n);
                    pos += n;
                } finally {
                    folio.unlock();
                }
            }
        } finally {
            inode.unlockShared();
        }
    }

    /**
     * Stores {@code n} bytes into a locked, uptodate folio and takes the write fault on it. The bytes
     * go in first, so that an {@code INLINE} mapping can be written through before the adapter's
     * {@code end} persists it; if the fault fails, the folio's old bytes are put back (the kernel's
     * failed {@code page_mkwrite} never lets the store happen), unless they were already written
     * through to inline data (then the adapter's {@code end} failed, and the folio keeps agreeing with
     * the inline buffer, as after a buffered write whose {@code end} fails).
     */
    private void storeInto(Folio folio, int offset, MemorySegment bytes, int n) throws IOException {
        byte[] old = folio.memory().asSlice(offset, n).toArray(ValueLayout.JAVA_BYTE);
        MemorySegment.copy(bytes, 0, folio.memory(), offset, n);
        boolean[] wroteThrough = {false};
        try {
            mkwrite(folio, wroteThrough);
        } catch (IOException | RuntimeException e) {
            if (!wroteThrough[0]) {
                MemorySegment.copy(MemorySegment.ofArray(old), 0, folio.memory(), offset, n);
            }
            throw e;
        }
    }

    /**
     * The write fault on a locked, uptodate folio: map the part inside EOF for writing and dirty
     * exactly those blocks (the 2024 fix to the dirty length of {@code iomap_page_mkwrite}). The
     * kernel's {@code iomap_folio_mkwrite_iter}, with the EOF check of its
     * {@code folio_mkwrite_check_truncate}. An {@code INLINE} part is written through to the adapter's
     * inline buffer instead of dirtied (the kernel's gfs2 unstuffs the file in its
     * {@code page_mkwrite} instead; an adapter may do the same by returning {@code MAPPED} here).
     * {@code wroteThrough[0]} becomes true once bytes went to inline data.
     */
    private void mkwrite(Folio folio, boolean[] wroteThrough) throws IOException {
        long insideEof = Math.min(folio.size(), inode.size() - folio.pos());
        if (insideEof <= 0) {
            throw new InvalidRangeException("write fault past EOF of inode " + inode.ino());
        }
        IomapIter iter = new IomapIter(inode, inode.ops(), folio.pos(), insideEof, FAULT);
        try {
            while (iter.next()) {
                int offset = (int) (iter.pos() - folio.pos());
                int length = (int) iter.length();
                if (iter.iomap().type() == IomapType.INLINE) {
                    BufferedRead.writeThroughInline(folio, offset, length, iter.iomap());
                    wroteThrough[0] = true;
                } else {
                    FolioState state = folio.stateForUpdate();
                    if (state != null) {
                        state.setRangeDirty(offset, length);
                    }
                    folio.markDirty();
                }
                iter.advance(length);
            }
        } catch (IOException | RuntimeException e) {
            BufferedWrite.abort(iter, e);
            throw e;
        }
    }
}
