package dev.iomap.spi;

import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * How the core reads file blocks through a {@link IomapType#MAPPED} mapping: the kernel's
 * {@code iomap_read_ops} ({@code read_folio_range}, with the filesystem's read completion). The
 * default reads the blocks from the device at the mapping's address. An adapter overrides it when the
 * bytes on the device are not the file's bytes as they are (compressed extents) or must be checked
 * before anyone sees them (checksummed extents, bcachefs's {@code bch2_read_extent} and its
 * {@code bch2_rbio_narrow_crcs}/checksum verification in the read completion).
 *
 * <p>The core calls {@link #readFolioRange} for every run of blocks it reads from the device: a
 * buffered read, readahead, a mapped-region fault, and the edge blocks of a write or a zeroing that
 * covers them only partly. The blocks become uptodate only after it returns normally; if it throws,
 * nothing of the range is marked uptodate, the folio is not kept uptodate, and the caller's read (or
 * write) fails with that exception. So an adapter that cannot vouch for the bytes throws, and no
 * caller ever sees them.
 */
public interface ReadOps {

    /** Reads from the device at the mapping's address: what the core does without an adapter's hook. */
    ReadOps DEVICE = new ReadOps() { };

    /**
     * Fills {@code dst} with the file's bytes at {@code pos}.
     *
     * <p>{@code dst} has {@code dst.remaining()} bytes, whole filesystem blocks (the block straddling
     * EOF included; the core zeroes what lies past EOF afterwards), starting at file offset {@code pos}
     * (block aligned) and lying inside {@code iomap}, which is a {@code MAPPED} mapping the adapter's
     * {@link IomapOps#begin} returned (for a write's edge blocks, its source mapping). It is a view of
     * folio memory, valid during the call only; the hook fills all of it and leaves its position at its
     * limit, or throws. It runs with the folio locked, on the reading thread or, for background
     * readahead, on one of the cache's readahead threads (which holds the file's inode lock shared, as
     * the reader does, and mapped with {@link IomapRequest#NOWAIT}): it must not read or write this
     * file through the cache, nor, for readahead, wait for a lock another thread may hold while it
     * waits for the folio.
     *
     * @param inode the file
     * @param iomap the mapping the blocks are read through
     * @param pos file offset of {@code dst}'s first byte
     * @param dst where the bytes go
     * @param device the device the filesystem is on
     * @throws IOException if the bytes cannot be read or fail verification; the read fails with it
     */
    default void readFolioRange(IomapInode inode, Iomap iomap, long pos, ByteBuffer dst, BlockDevice device)
            throws IOException {
        device.read(iomap.deviceAddress(pos), dst);
    }
}
