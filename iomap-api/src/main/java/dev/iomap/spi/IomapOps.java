package dev.iomap.spi;

import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.util.Set;

/**
 * How an adapter maps file ranges for the core's buffered paths: the kernel's {@code iomap_ops}.
 *
 * <p>The core calls {@link #begin} for a range, acts on the returned mapping's length (or less),
 * then calls {@link #end} with how much it did, and repeats for the rest of the range. Calls for one
 * inode may come from several threads at once; writes and size changes of one inode are serialised by
 * the core's inode lock.
 */
public interface IomapOps {

    /**
     * Maps the range starting at {@code pos} (the kernel's {@code iomap_begin}).
     *
     * @param inode the file
     * @param pos first byte the core needs, at least 0
     * @param length bytes the core would like mapped, at least 1
     * @param request why the core asks (never empty for a write; empty for a plain read)
     * @return a mapping whose {@code iomap} contains {@code pos}; it may be shorter than {@code length}
     * @throws IOException if the adapter cannot map (e.g. {@link NoSpaceException} for a write)
     */
    IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request)
            throws IOException;

    /**
     * Ends one mapping (the kernel's {@code iomap_end}): {@code written} of the {@code length} bytes
     * asked for were done. An adapter
     * that reserved delayed allocation for the whole range releases the reservation of the unwritten
     * part here.
     *
     * <p>For an {@link IomapType#INLINE} {@code iomap} with {@code written > 0} under a
     * {@link IomapRequest#WRITE}, {@link IomapRequest#ZERO} or {@link IomapRequest#FAULT} request, the
     * core has already copied the written bytes into {@code iomap.inlineData()} (file offsets
     * {@code [pos, pos + written)}, or for a fault every byte of the mapping below EOF) and raised the
     * in-memory size; the adapter persists its inline buffer and size here, because no writeback
     * will (see {@link Iomap}, "Inline data").
     *
     * @param inode the file
     * @param pos the {@code pos} given to {@link #begin}
     * @param length bytes the core acted on, at most the mapping's length
     * @param written bytes actually written (or zeroed), at most {@code length}
     * @param request the request given to {@link #begin}
     * @param iomap the mapping {@link #begin} returned
     * @throws IOException if releasing fails; the core reports it to the caller
     */
    default void end(IomapInode inode, long pos, long length, long written, Set<IomapRequest> request,
            Iomap iomap) throws IOException {
    }

    /**
     * @return the optional per-folio hooks of the write path (the kernel's {@code iomap_write_ops}, with
     *     {@link WriteOps#valid}); {@link WriteOps#NONE} by default
     */
    default WriteOps writeOps() {
        return WriteOps.NONE;
    }

    /**
     * @return how the core reads blocks through this adapter's {@code MAPPED} mappings (the kernel's
     *     {@code iomap_read_ops}); {@link ReadOps#DEVICE} by default
     */
    default ReadOps readOps() {
        return ReadOps.DEVICE;
    }
}
