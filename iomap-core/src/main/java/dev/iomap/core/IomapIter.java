package dev.iomap.core;

import dev.iomap.spi.Iomap;
import dev.iomap.api.IomapException;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.core.trace.IterDstmapEvent;
import dev.iomap.core.trace.IterEvent;
import dev.iomap.core.trace.IterSrcmapEvent;
import java.io.IOException;
import java.util.Set;

/**
 * One pass over a file range, one mapping at a time: the kernel's {@code iomap_iter}.
 *
 * <pre>{@code
 * IomapIter iter = new IomapIter(inode, ops, pos, length, request);
 * while (iter.next()) {
 *     long done = act(iter.pos(), iter.length(), iter.iomap());
 *     iter.advance(done);          // or iter.markStale() to look the range up again
 * }
 * }</pre>
 *
 * <p>{@link #next()} ends the previous mapping through {@link IomapOps#end} with the bytes processed
 * and begins the next at the advanced position. It stops when the range is done, or when a mapping
 * processed nothing without being marked stale (the action gave up). Not thread-safe.
 */
public final class IomapIter {
    private final IomapContext inode;
    private IomapOps ops;
    private Set<IomapRequest> request;
    private long pos;
    private long remaining;
    private IomapMapping mapping;
    private long mappedLength;
    private long processed;
    private boolean stale;

    /**
     * @param inode the file
     * @param ops the adapter's mapping operations
     * @param pos first byte
     * @param length bytes in the range
     * @param request why the mappings are wanted
     */
    public IomapIter(IomapContext inode, IomapOps ops, long pos, long length, Set<IomapRequest> request) {
        this.inode = inode;
        this.ops = ops;
        this.pos = pos;
        this.remaining = length;
        this.request = request;
    }

    /**
     * Starts a new pass with this iterator, exactly as a new iterator would (the write path keeps one
     * per inode so that a write allocates nothing). Whatever the previous pass left is forgotten, as a
     * discarded iterator's would be: a pass ends its mappings itself ({@link #next()} returning false,
     * or {@link #abort()}), except when an {@link Error} cut it short.
     *
     * @param ops the adapter's mapping operations
     * @param pos first byte
     * @param length bytes in the range
     * @param request why the mappings are wanted
     */
    void reset(IomapOps ops, long pos, long length, Set<IomapRequest> request) {
        this.mapping = null;
        this.ops = ops;
        this.pos = pos;
        this.remaining = length;
        this.request = request;
        this.mappedLength = 0;
        this.processed = 0;
        this.stale = false;
    }

    /**
     * Ends the current mapping, if any, and begins the next (the kernel's {@code iomap_iter}, with
     * {@code iomap_iter_continue} and {@code iomap_iter_done}).
     *
     * @return true if there is a mapping to act on
     * @throws IOException from the adapter, or if it returned a mapping that does not contain the
     *     position asked for
     */
    public boolean next() throws IOException {
        IterEvent.emit(inode, pos + processed, mappedLength - processed, processed, request);
        if (mapping != null) {
            Iomap done = mapping.iomap();
            mapping = null;
            ops.end(inode, pos, mappedLength, processed, request, done);
            pos += processed;
            remaining -= processed;
            boolean gaveUp = processed == 0 && !stale;
            processed = 0;
            stale = false;
            if (gaveUp) {
                return false;
            }
        }
        if (remaining <= 0) {
            return false;
        }
        IomapMapping next = ops.begin(inode, pos, remaining, request);
        if (next == null || !next.iomap().contains(pos)
                || (next.srcmap() != null && !next.srcmap().contains(pos))) {
            throw new IomapException("adapter mapping " + next + " does not contain file offset " + pos
                    + " of inode " + inode.ino());
        }
        checkInline(next);
        mapping = next;
        IterDstmapEvent.emit(inode, next.iomap());
        IterSrcmapEvent.emit(inode, next.srcmap());
        long end = Math.min(next.iomap().end(), pos + remaining);
        if (next.srcmap() != null) {
            end = Math.min(end, next.srcmap().end());
        }
        mappedLength = end - pos;
        return true;
    }

    /**
     * The bytes every first folio of the file holds: a page, or one block when blocks are larger
     * (the minimum folio order), so that inline data within them always sits in one folio. The kernel
     * asks for a page ({@code iomap_inline_data_valid}); its filesystems with inline data (gfs2,
     * erofs, ext4) have no blocks larger than a page.
     */
    private long firstFolioBytes() {
        return 1L << (inode.pageCache().pageShift() + inode.pageCache().minOrder());
    }

    /**
     * Refuses an {@code INLINE} mapping the core cannot serve (see {@link Iomap}, "Inline data"): not
     * at file offset 0, past the first page, short of EOF, or paired with another source. The kernel
     * WARNs and fails with {@code -EIO} in {@code iomap_write_begin_inline},
     * {@code iomap_read_inline_data} and {@code iomap_inline_data_valid}. The mapping is ended with
     * nothing processed before the error is thrown, so the adapter can release it.
     */
    private void checkInline(IomapMapping next) throws IOException {
        Iomap iomap = next.iomap();
        Iomap src = next.readSource();
        if (iomap.type() != IomapType.INLINE && src.type() != IomapType.INLINE) {
            return;
        }
        String problem = null;
        if (!src.equals(iomap)) {
            problem = "an INLINE mapping must be its own read source (no srcmap)";
        } else if (iomap.offset() != 0) {
            problem = "inline data must start at file offset 0";
        } else if (iomap.end() > firstFolioBytes()) {
            problem = inode.pageCache().minOrder() == 0
                    ? "inline data must lie within the first page (" + firstFolioBytes() + " bytes)"
                    : "inline data must lie within the first block (" + firstFolioBytes()
                            + " bytes, the smallest folio of blocks larger than a page)";
        } else if (inode.size() > iomap.end()) {
            problem = "inline data must reach EOF (size " + inode.size() + ")";
        }
        if (problem != null) {
            IomapException failure = new IomapException(problem + "; adapter returned " + next + " at "
                    + pos + " for inode " + inode.ino());
            try {
                ops.end(inode, pos, Math.min(iomap.end(), pos + remaining) - pos, 0, request, iomap);
            } catch (IOException | RuntimeException suppressed) {
                failure.addSuppressed(suppressed);
            }
            throw failure;
        }
    }

    /**
     * Ends the current mapping after a failure, reporting the bytes processed so far to
     * {@link IomapOps#end} (so an adapter can release what the rest would have used): the error path
     * of the kernel's {@code iomap_iter}, called with a negative status. Idempotent.
     *
     * @throws IOException from {@link IomapOps#end}
     */
    public void abort() throws IOException {
        if (mapping == null) {
            return;
        }
        Iomap done = mapping.iomap();
        mapping = null;
        remaining = 0;
        ops.end(inode, pos, mappedLength, processed, request, done);
    }

    /** @return the current position */
    public long pos() {
        return pos + processed;
    }

    /**
     * @return bytes of the current mapping left from {@link #pos()} within the range (the kernel's
     *     {@code iomap_length})
     */
    public long length() {
        return mappedLength - processed;
    }

    /** @return the mapping to act on */
    public Iomap iomap() {
        return mapping.iomap();
    }

    /**
     * @return the mapping to read existing data through: the srcmap, or the iomap itself (the kernel's
     *     {@code iomap_iter_srcmap})
     */
    public Iomap srcmap() {
        return mapping.readSource();
    }

    /** @return why the mappings are wanted */
    public Set<IomapRequest> request() {
        return request;
    }

    /**
     * Records bytes done under the current mapping (the kernel's {@code iomap_iter_advance}; the
     * position moves at the next {@link #next()}).
     *
     * @param bytes bytes processed, at most {@link #length()}
     */
    public void advance(long bytes) {
        processed += bytes;
    }

    /**
     * Marks the current mapping stale: {@link #next()} will look up the rest of the range again (the
     * kernel sets {@code IOMAP_F_STALE} on the iomap).
     */
    public void markStale() {
        stale = true;
    }
}
