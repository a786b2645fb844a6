package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.InvalidRangeException;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.Map;

/** mkfs: writes an empty xfs-like filesystem (a root directory) and flushes. Stateless. */
final class Formatter {

    private Formatter() {
    }

    /**
     * The most blocks mkfs formats: it writes the whole journal and every free-space bitmap, and a
     * mount holds per-block state, so time and memory grow with the device. 64 GiB of 4 KiB blocks.
     */
    static final long MAX_BLOCKS = 1L << 24;

    static void format(BlockDevice raw, FormatOptions options) throws IOException {
        int blockSize = options.blockSize();
        Geometry geometry = check(raw.blockSize(), raw.capacity(), options);
        BlockDevice device = BlockSizeView.of(raw, blockSize);
        for (int agno = 0; agno < geometry.agCount(); agno++) {
            AllocationGroup group = AllocationGroup.formatted(geometry, agno);
            for (var payload : group.encode().entrySet()) {
                MetadataBlock.write(device, payload.getKey(), geometry.groupBlockType(agno, payload.getKey()),
                        payload.getValue());
            }
        }
        InodeState root = new InodeState(Geometry.ROOT_INO, FileType.DIRECTORY);
        root.nlink = 2;
        root.parent = Geometry.ROOT_INO;
        root.mtime = System.currentTimeMillis();
        Map<Long, InodeState> inodes = Map.of(root.ino, root);
        for (long index = 0; index < geometry.inodeTableBlocks(); index++) {
            MetadataBlock.write(device, geometry.inodeTableStart() + index, Layout.INODE_TABLE,
                    InodeCodec.encodeTableBlock(geometry, index, inodes::get));
        }
        Journal.format(device, geometry.journalStart(), geometry.journalBlocks());
        new Superblock(geometry, true, new SecureRandom().nextLong(), options.label()).write(device);
        device.flush();
    }

    /**
     * Checks everything format checks, without a device: block size, label, properties, size.
     *
     * @return the geometry format would write
     */
    static Geometry check(int deviceBlockSize, long capacity, FormatOptions options) throws IOException {
        int blockSize = options.blockSize();
        if (blockSize < deviceBlockSize) {
            throw new InvalidRangeException("xfs-like: the block size " + blockSize
                    + " is smaller than the device's block size " + deviceBlockSize);
        }
        Superblock.checkLabel(options.label());
        long totalBlocks = capacity / blockSize;
        if (totalBlocks > MAX_BLOCKS) {
            throw new InvalidRangeException("xfs-like formats at most " + MAX_BLOCKS + " blocks ("
                    + ((MAX_BLOCKS * blockSize) >> 30) + " GiB of " + blockSize + "-byte blocks); the device has "
                    + totalBlocks + ": use a smaller size or larger blocks");
        }
        return Geometry.choose(blockSize, totalBlocks, options.properties());
    }
}
