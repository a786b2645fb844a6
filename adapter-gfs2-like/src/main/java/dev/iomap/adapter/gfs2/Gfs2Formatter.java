package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.Journal;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.adapter.support.BlockIo;
import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * mkfs for gfs2-like: the superblock, {@code journals} empty journals, every resource group's header
 * and bitmap, and the root directory's dinode. Properties: {@code journals} (default 1, at most 64),
 * {@code journalblocks} (blocks per journal; default {@code totalBlocks / 32} clamped to [64, 16384]),
 * {@code rgblocks} (blocks per resource group; default {@code totalBlocks / 8} clamped to [64, 65536]).
 */
final class Gfs2Formatter {
    private static final Set<String> PROPERTIES = Set.of("journals", "journalblocks", "rgblocks");

    private Gfs2Formatter() {
    }

    /**
     * @param deviceBlockSize the device's block size
     * @param capacity the device's bytes
     * @param options the options
     * @return the layout mkfs would write
     * @throws InvalidRangeException if an option is unknown or out of range, or the device is unfit
     */
    static Gfs2Layout plan(int deviceBlockSize, long capacity, FormatOptions options) throws InvalidRangeException {
        int bs = options.blockSize();
        if (deviceBlockSize != bs) {
            throw new InvalidRangeException("gfs2-like needs the device's block size (" + deviceBlockSize
                    + ") to be the filesystem's (" + bs + ")");
        }
        for (String key : options.properties().keySet()) {
            if (!PROPERTIES.contains(key)) {
                throw new InvalidRangeException("gfs2-like has no format property '" + key + "' (known: "
                        + String.join(", ", new java.util.TreeSet<>(PROPERTIES)) + ")");
            }
        }
        long total = capacity / bs;
        if (total < 256) {
            throw new InvalidRangeException("gfs2-like needs at least 256 blocks; the device has " + total);
        }
        Map<String, String> p = options.properties();
        int journals = (int) number(p, "journals", 1, 1, 64);
        long journalBlocks = number(p, "journalblocks", Math.clamp(total / 32, 64, 16384), 16, total / 4);
        long rgBlocks = number(p, "rgblocks", Math.clamp(total / 8, 64, 65536), 16, 1L << 24);
        Gfs2Layout probe = new Gfs2Layout(bs, total, journals, journalBlocks, rgBlocks, 0, options.label());
        long rgStart = probe.rgStart();
        long root = rgStart + 1 + probe.bitmapBlocks(probe.rgLength(0));
        Gfs2Layout layout = new Gfs2Layout(bs, total, journals, journalBlocks, rgBlocks, root, options.label());
        String problem = layout.problem(total);
        if (problem != null || layout.rgLength(layout.rgCount() - 1) < 2 + layout.bitmapBlocks(rgBlocks)) {
            throw new InvalidRangeException("gfs2-like cannot be laid out so: " + (problem != null ? problem
                    : "the last resource group is too small; choose another rgblocks"));
        }
        return layout;
    }

    private static long number(Map<String, String> p, String key, long fallback, long min, long max)
            throws InvalidRangeException {
        String text = p.get(key);
        if (text == null) {
            return fallback;
        }
        try {
            long value = Long.parseLong(text.trim());
            if (value < min || value > max) {
                throw new InvalidRangeException("gfs2-like " + key + "=" + value + " is outside [" + min + ", " + max + "]");
            }
            return value;
        } catch (NumberFormatException e) {
            throw new InvalidRangeException("gfs2-like " + key + "=" + text + " is not a number");
        }
    }

    /**
     * Writes an empty filesystem and flushes.
     *
     * @param device the device
     * @param options the options
     * @throws IOException if an option is invalid or the device fails
     */
    static void format(BlockDevice device, FormatOptions options) throws IOException {
        Gfs2Layout layout = plan(device.blockSize(), device.capacity(), options).withUuid(UUID.randomUUID());
        for (int j = 0; j < layout.journals(); j++) {
            Journal.format(device, layout.journalStart(j), layout.journalBlocks());
        }
        int bs = layout.blockSize();
        for (int g = 0; g < layout.rgCount(); g++) {
            long length = layout.rgLength(g);
            ResourceGroup rg = ResourceGroup.fresh(g, layout.rgStart(g), length, layout.bitmapBlocks(length));
            if (g == 0) {
                rg.set(layout.rootIno(), ResourceGroup.DINODE);
            }
            BlockIo.write(device, rg.start, rg.encodeHeader(bs), IoPurpose.METADATA);
            for (int i = 0; i < rg.bitmapBlocks; i++) {
                BlockIo.write(device, rg.start + 1 + i, rg.encodeBitmap(i, bs, layout.blocksPerBitmap()), IoPurpose.METADATA);
            }
        }
        Dinode root = new Dinode(layout.rootIno(), layout);
        Instant now = Instant.now();
        root.type = FileType.DIRECTORY;
        root.mode = NewInodeAttributes.defaultMode(FileType.DIRECTORY);
        root.nlink = 2;
        root.parent = layout.rootIno();
        root.atime = root.mtime = root.ctime = root.btime = now;
        BlockIo.write(device, root.ino, root.encode(bs), IoPurpose.METADATA);
        layout.write(device);
        device.flush();
    }
}
