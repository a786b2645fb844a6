package dev.iomap.core;

import dev.iomap.api.ExtentFlag;
import dev.iomap.api.FileExtent;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Extent reports: the kernel's {@code iomap_fiemap} ({@code fs/iomap/fiemap.c}). The adapter is asked
 * with {@link IomapRequest#REPORT} alone, under the inode lock held shared, one mapping at a time; each
 * mapping that is not a hole becomes an extent ({@code iomap_to_fiemap}'s flags), merged with the one
 * before it when they continue each other.
 */
public final class Fiemap {
    private static final Set<IomapRequest> REPORT = EnumSet.of(IomapRequest.REPORT);

    private Fiemap() {
    }

    /**
     * See {@link dev.iomap.api.IomapFile#fiemap}.
     *
     * @param inode the file
     * @param offset first byte of interest
     * @param length bytes of interest
     * @param sync whether to write back dirty data first
     * @return the extents
     * @throws InvalidRangeException for a negative offset or length
     * @throws IOException from the adapter
     */
    public static List<FileExtent> fiemap(CachedInode inode, long offset, long length, boolean sync)
            throws IOException {
        if (offset < 0 || length < 0) {
            throw new InvalidRangeException("fiemap of inode " + inode.ino() + ": negative offset " + offset
                    + " or length " + length);
        }
        inode.lockShared();
        try {
            long size = inode.size();
            long blockEof = (size + inode.blockSize() - 1) & -(long) inode.blockSize();
            long end = length > Long.MAX_VALUE - offset ? blockEof : Math.min(offset + length, blockEof);
            if (sync && end > offset) {
                inode.writeAndWait(offset, end);
            }
            List<FileExtent> extents = new ArrayList<>();
            if (end > offset) {
                collect(inode, offset, end, extents);
            }
            if (!extents.isEmpty() && end == blockEof) {
                FileExtent last = extents.removeLast();
                EnumSet<ExtentFlag> flags = flagSet(last.flags());
                flags.add(ExtentFlag.LAST);
                extents.add(new FileExtent(last.logical(), last.physical(), last.length(), flags));
            }
            return List.copyOf(extents);
        } finally {
            inode.unlockShared();
        }
    }

    private static void collect(CachedInode inode, long offset, long end, List<FileExtent> extents)
            throws IOException {
        IomapIter iter = new IomapIter(inode, inode.ops(), offset, end - offset, REPORT);
        try {
            while (iter.next()) {
                Iomap iomap = iter.iomap();
                long at = iter.pos();
                long bytes = iter.length();
                if (iomap.type() != dev.iomap.spi.IomapType.HOLE) {
                    add(extents, extent(iomap, at, bytes));
                }
                iter.advance(bytes);
            }
        } catch (IOException | RuntimeException e) {
            BufferedWrite.abort(iter, e);
            throw e;
        }
    }

    /** The kernel's {@code iomap_to_fiemap}, for the part {@code [at, at + bytes)} of a mapping. */
    private static FileExtent extent(Iomap iomap, long at, long bytes) {
        EnumSet<ExtentFlag> flags = EnumSet.noneOf(ExtentFlag.class);
        long physical = 0;
        switch (iomap.type()) {
            case DELALLOC -> {
                flags.add(ExtentFlag.DELALLOC);
                flags.add(ExtentFlag.UNKNOWN);
            }
            case UNWRITTEN -> {
                flags.add(ExtentFlag.UNWRITTEN);
                physical = iomap.deviceAddress(at);
            }
            case INLINE -> {
                flags.add(ExtentFlag.DATA_INLINE);
                flags.add(ExtentFlag.NOT_ALIGNED);
            }
            case MAPPED -> physical = iomap.deviceAddress(at);
            case HOLE -> throw new IllegalStateException("holes are not extents");
        }
        if (iomap.has(IomapFlag.SHARED)) {
            flags.add(ExtentFlag.SHARED);
        }
        return new FileExtent(at, physical, bytes, flags);
    }

    /** Appends, merging with the previous extent when it continues it in the file and on the device. */
    private static void add(List<FileExtent> extents, FileExtent next) {
        if (!extents.isEmpty()) {
            FileExtent prev = extents.getLast();
            boolean located = !next.flags().contains(ExtentFlag.UNKNOWN)
                    && !next.flags().contains(ExtentFlag.DATA_INLINE);
            if (prev.end() == next.logical() && prev.flags().equals(next.flags())
                    && (!located || prev.physical() + prev.length() == next.physical())) {
                extents.set(extents.size() - 1, new FileExtent(prev.logical(), prev.physical(),
                        prev.length() + next.length(), prev.flags()));
                return;
            }
        }
        extents.add(next);
    }

    private static EnumSet<ExtentFlag> flagSet(Set<ExtentFlag> flags) {
        return flags.isEmpty() ? EnumSet.noneOf(ExtentFlag.class) : EnumSet.copyOf(flags);
    }
}
