package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockSizeView;
import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NewInodeAttributes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * mkfs: writes an empty xfs-like filesystem (a root directory) and flushes. Writes only what the empty
 * filesystem needs, never zeroes the device: the superblock, the journal superblock, the inode table
 * blocks up to the root's (the first, or the first two at 512-byte blocks, which hold one slot each), and
 * each group's header and its one free-space leaf; every other metadata block is
 * written when it first holds something (the group headers' leaf bitmaps and the inode table's count
 * of initialised blocks say which may be read). Time and memory grow with the group count only.
 * Stateless.
 */
final class XfsFormatter {

    private XfsFormatter() {
    }

    static void format(BlockDevice raw, FormatOptions options) throws IOException {
        int blockSize = options.blockSize();
        XfsGeometry geometry = check(raw.blockSize(), raw.capacity(), options);
        BlockDevice device = BlockSizeView.of(raw, blockSize);
        for (int agno = 0; agno < geometry.agCount(); agno++) {
            writeGroup(device, geometry, AllocationGroup.formatted(geometry, agno));
        }
        InodeState root = new InodeState(XfsGeometry.ROOT_INO, FileType.DIRECTORY);
        root.nlink = 2;
        root.parent = XfsGeometry.ROOT_INO;
        root.mode = NewInodeAttributes.defaultMode(FileType.DIRECTORY);
        root.born(Instant.now());
        Map<Long, InodeState> inodes = Map.of(root.ino, root);
        long tableBlocks = XfsGeometry.ROOT_INO / geometry.inodesPerBlock() + 1;
        for (long index = 0; index < tableBlocks; index++) {
            MetadataBlock.write(device, geometry.inodeTableStart() + index, XfsLayout.INODE_TABLE,
                    InodeCodec.encodeTableBlock(geometry, index, tableBlocks, inodes::get));
        }
        Journal.format(device, geometry.journalStart(), geometry.journalBlocks());
        new XfsSuperblock(geometry, true, new SecureRandom().nextLong(), options.label()).write(device);
        device.flush();
    }

    /** Writes a fresh group: its header and free-space leaf 0, which follows it, in one write. */
    private static void writeGroup(BlockDevice device, XfsGeometry geometry, AllocationGroup group) throws IOException {
        List<ByteBuffer> blocks = new ArrayList<>();
        long first = geometry.agStart(group.agno());
        for (var payload : group.encodeAll().entrySet()) {
            long block = payload.getKey();
            if (block != first + blocks.size()) {
                throw new IllegalStateException("a fresh group's blocks follow its header: " + block);
            }
            blocks.add(new MetadataBlock(geometry.groupBlockType(group.agno(), block), block, 0, payload.getValue())
                    .encode(geometry.blockSize()));
        }
        BlockIo.write(device, first, blocks, IoPurpose.METADATA);
    }

    /**
     * Checks everything format checks, without a device: block size, label, properties, size.
     *
     * @return the geometry format would write
     */
    static XfsGeometry check(int deviceBlockSize, long capacity, FormatOptions options) throws IOException {
        int blockSize = options.blockSize();
        if (blockSize < deviceBlockSize) {
            throw new InvalidRangeException("xfs-like: the block size " + blockSize
                    + " is smaller than the device's block size " + deviceBlockSize);
        }
        XfsSuperblock.checkLabel(options.label());
        long totalBlocks = capacity / blockSize;
        long maxBlocks = XfsGeometry.maxBlocks(blockSize);
        if (totalBlocks > maxBlocks) {
            throw new InvalidRangeException("xfs-like addresses at most " + maxBlocks + " blocks of " + blockSize
                    + " bytes (" + binary(maxBlocks * blockSize) + ": " + XfsGeometry.MAX_AG_COUNT
                    + " allocation groups of at most " + XfsGeometry.maxAgBlocks(blockSize)
                    + " blocks, what one group header's leaf bitmap covers); the device has " + totalBlocks
                    + " blocks: use a smaller size or larger blocks");
        }
        return XfsGeometry.choose(blockSize, totalBlocks, options.properties());
    }

    /** @return bytes in the largest binary unit that leaves at least 1, one decimal: "1.1 PiB" */
    static String binary(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        int unit = 0;
        double value = bytes;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
    }
}
