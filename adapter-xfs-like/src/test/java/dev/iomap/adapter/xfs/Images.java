package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;

/** Reading and forging unmounted images, for tests. */
final class Images {

    private Images() {
    }

    static XfsGeometry geometry(BlockDevice device) throws IOException {
        return XfsSuperblock.read(device).geometry();
    }

    static ImageLoader.Image load(BlockDevice device) throws IOException {
        return new ImageLoader(device, geometry(device), true).load();
    }

    /** @return the reference-count records of every group, as "start+length x count" */
    static java.util.List<RefcountMap.Record> refcounts(BlockDevice device) throws IOException {
        ImageLoader.Image image = load(device);
        java.util.List<RefcountMap.Record> all = new java.util.ArrayList<>();
        for (AllocationGroup group : image.groups) {
            all.addAll(group.refcounts().records());
        }
        return all;
    }

    /** @return data-fork extents flagged shared, over every inode */
    static long sharedExtents(BlockDevice device) throws IOException {
        long shared = 0;
        for (InodeState inode : load(device).inodes.values()) {
            for (Extent extent : inode.data.extents()) {
                if (extent.shared()) {
                    shared++;
                }
            }
        }
        return shared;
    }

    /** Writes a group's header and every leaf holding records as they are in memory (with valid checksums). */
    static void writeGroup(BlockDevice device, XfsGeometry geometry, AllocationGroup group) throws IOException {
        for (var payload : group.encodeAll().entrySet()) {
            MetadataBlock.write(device, payload.getKey(), geometry.groupBlockType(group.agno(), payload.getKey()),
                    payload.getValue());
        }
        device.flush();
    }

    /** Writes the inode table block holding {@code ino} as the loaded inodes say (with a valid checksum). */
    static void writeInodeTable(BlockDevice device, ImageLoader.Image image, long ino) throws IOException {
        XfsGeometry geometry = geometry(device);
        long index = ino / geometry.inodesPerBlock();
        MetadataBlock.write(device, geometry.inodeTableStart() + index, XfsLayout.INODE_TABLE,
                InodeCodec.encodeTableBlock(geometry, index, image.initialisedTableBlocks, image.inodes::get));
        device.flush();
    }

    /** Flips one byte of a block. */
    static void flipByte(BlockDevice device, long block, int offset) throws IOException {
        int bs = device.blockSize();
        ByteBuffer buffer = ByteBuffer.allocate(bs);
        device.read(block * bs, buffer);
        buffer.put(offset, (byte) (buffer.get(offset) ^ 0x5a));
        device.write(block * bs, buffer.clear(), dev.iomap.device.IoPurpose.METADATA).join();
        device.flush();
    }
}
