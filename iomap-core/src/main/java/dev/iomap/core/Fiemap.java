package dev.iomap.core;

import dev.iomap.api.FileExtent;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The extent report: the kernel's {@code iomap_fiemap} ({@code fs/iomap/fiemap.c}). Callers hold the
 * inode lock shared.
 *
 * <p>The adapter is asked with {@link IomapRequest#REPORT} alone, one mapping at a time. Each
 * mapping becomes one extent as the kernel's {@code iomap_to_fiemap} makes it: {@code MAPPED} as is
 * ({@code SHARED} if the mapping is), {@code UNWRITTEN} with {@code UNWRITTEN}, {@code DELALLOC} with
 * {@code DELALLOC|UNKNOWN} at address 0, {@code INLINE} with {@code DATA_INLINE|NOT_ALIGNED} at
 * address 0; holes are left out and the last extent gets {@code LAST}. One addition to the kernel:
 * over a {@code HOLE}, the blocks the page cache holds dirty or under writeback are reported as
 * {@code DELALLOC|UNKNOWN} extents, because an adapter of this core may allocate only at writeback
 * (the kernel never sees dirty data over a hole; see {@link Seek}), and data just written must not be
 * reported as missing. Such an answer is believed only while the mapping is still
 * {@link dev.iomap.spi.WriteOps#valid valid}; otherwise the range is looked up again.
 */
final class Fiemap {
    private static final Set<IomapRequest> REPORT = EnumSet.of(IomapRequest.REPORT);

    private Fiemap() {
    }

    /**
     * @param inode the file, its inode lock held shared
     * @param pos first byte, at least 0
     * @param end the byte past the range, at most the size rounded up to a block
     * @return the extents in file order, the last with {@code LAST}
     * @throws IOException from the adapter
     */
    static List<FileExtent> map(IomapContext inode, long pos, long end) throws IOException {
        List<FileExtent> extents = new ArrayList<>();
        if (pos >= end) {
            return extents;
        }
        IomapIter iter = new IomapIter(inode, inode.ops(), pos, end - pos, REPORT);
        try {
            while (iter.next()) {
                Iomap iomap = iter.iomap();
                long start = iter.pos();
                long length = iter.length();
                if (iomap.type() != dev.iomap.spi.IomapType.HOLE) {
                    extents.add(extent(iomap, start, length));
                    iter.advance(length);
                } else {
                    List<FileExtent> cached = cachedRuns(inode, start, start + length, DirtyScan.CACHE);
                    if (!inode.writeOps().valid(inode, iomap)) {
                        iter.markStale();
                    } else {
                        extents.addAll(cached);
                        iter.advance(length);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            BufferedWrite.abort(iter, e);
            throw e;
        }
        if (!extents.isEmpty()) {
            int last = extents.size() - 1;
            extents.set(last, extents.get(last).with(FileExtent.Flag.LAST));
        }
        return extents;
    }

    /** The kernel's {@code iomap_to_fiemap} for the part {@code [start, start + length)} of {@code iomap}. */
    private static FileExtent extent(Iomap iomap, long start, long length) {
        EnumSet<FileExtent.Flag> flags = EnumSet.noneOf(FileExtent.Flag.class);
        switch (iomap.type()) {
            case DELALLOC -> {
                flags.add(FileExtent.Flag.DELALLOC);
                flags.add(FileExtent.Flag.UNKNOWN);
            }
            case UNWRITTEN -> flags.add(FileExtent.Flag.UNWRITTEN);
            case INLINE -> {
                flags.add(FileExtent.Flag.DATA_INLINE);
                flags.add(FileExtent.Flag.NOT_ALIGNED);
            }
            case MAPPED, HOLE -> {
            }
        }
        if (iomap.flags().contains(IomapFlag.SHARED)) {
            flags.add(FileExtent.Flag.SHARED);
        }
        long physical = iomap.address() == Iomap.NULL_ADDR ? 0 : iomap.address() + (start - iomap.offset());
        return new FileExtent(start, physical, length, flags);
    }

    /**
     * How {@link #cachedRuns} looks into the cache: {@link Seek#scan} with {@link Seek.CachedData#DIRTY}.
     * A seam for tests, which run writeback between two looks as the flusher or reclaim can.
     */
    @FunctionalInterface
    interface DirtyScan {
        /** The cache itself. */
        DirtyScan CACHE = (inode, from, end, wantData) -> Seek.scan(inode, from, end, Seek.CachedData.DIRTY, wantData);

        /**
         * @return as {@link Seek#scan}: the first offset of {@code [from, end)} whose block is dirty
         *     ({@code wantData}) or clean, or -1 if there is none
         */
        long scan(IomapContext inode, long from, long end, boolean wantData);
    }

    /**
     * The runs of blocks in {@code [start, end)}, a hole on the device, that the cache holds dirty. Each
     * run is found with two looks into the cache, for its first dirty block and for its end; writeback
     * (the flusher, reclaim) may clean that block between them, and then there is no run there.
     */
    static List<FileExtent> cachedRuns(IomapContext inode, long start, long end, DirtyScan cache) {
        List<FileExtent> runs = new ArrayList<>();
        long blockMask = -(long) inode.blockSize();
        long pos = start;
        while (pos < end) {
            long data = cache.scan(inode, pos, end, true);
            if (data < 0) {
                break;
            }
            long hole = cache.scan(inode, data, end, false);
            long stop = hole < 0 ? end : hole;
            if (stop <= data) {
                // written back between the two looks: no run here; go on from the next block
                pos = (data & blockMask) + inode.blockSize();
                continue;
            }
            runs.add(new FileExtent(data, 0, stop - data,
                    EnumSet.of(FileExtent.Flag.DELALLOC, FileExtent.Flag.UNKNOWN)));
            pos = stop;
        }
        return runs;
    }
}
