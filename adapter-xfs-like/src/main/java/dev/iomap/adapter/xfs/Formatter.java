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

    static void format(BlockDevice raw, FormatOptions options) throws IOException {
        int blockSize = options.blockSize();
        if (blockSize < raw.blockSize()) {
            throw new InvalidRangeException("xfs-like: the block size " + blockSize
                    + " is smaller than the device's block size " + raw.blockSize());
        }
        BlockDevice device = BlockSizeView.of(raw, blockSize);
        Superblock.checkLabel(options.label());
        Geometry geometry = Geometry.choose(blockSize, device.capacity() / blockSize, options.properties());
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
}
