package dev.iomap.adapter.support.skeleton;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;

/**
 * Where a skeleton filesystem keeps what, in filesystem blocks: superblock (block 0), journal, bitmap
 * (one bit per block of the device), inode table (fixed-size records), then the data area, whose blocks
 * the bitmap hands out for file data, directory blocks and the model's metadata.
 */
record Layout(int blockSize, long totalBlocks, long journalStart, long journalBlocks, long bitmapStart,
        long bitmapBlocks, long inodeStart, long inodeBlocks, long inodeCount, int slots) {

    /** Bytes of an inode record before the model's slots: type, links, size, mtime, reserved. */
    static final int RECORD_HEADER = 32;
    /** The root directory's inode number. */
    static final long ROOT = 1;

    static Layout compute(long capacity, int blockSize, int slots, int bytesPerInode) {
        long total = capacity / blockSize;
        long journal = Math.clamp(total / 16, 64, 4096);
        long bitmap = ceil(total, blockSize * 8L);
        int perBlock = blockSize / recordBytes(slots);
        if (perBlock < 1) {
            throw new IllegalArgumentException(slots + " slots per inode do not fit a " + blockSize + "-byte block");
        }
        long inodes = Math.max(64, capacity / bytesPerInode);
        long inodeBlocks = ceil(inodes, perBlock);
        long bitmapStart = 1 + journal;
        return new Layout(blockSize, total, 1, journal, bitmapStart, bitmap, bitmapStart + bitmap, inodeBlocks,
                inodeBlocks * perBlock, slots);
    }

    static int recordBytes(int slots) {
        return RECORD_HEADER + 8 * slots;
    }

    static long ceil(long value, long unit) {
        return (value + unit - 1) / unit;
    }

    int recordsPerBlock() {
        return blockSize / recordBytes(slots);
    }

    long firstDataBlock() {
        return inodeStart + inodeBlocks;
    }

    long dataBlocks() {
        return totalBlocks - firstDataBlock();
    }

    long inodeBlock(long ino) {
        return inodeStart + (ino - 1) / recordsPerBlock();
    }

    ByteBuffer encode() throws InvalidRangeException {
        BlockWriter out = BlockWriter.allocate(80, "skeleton superblock payload");
        out.putInt(blockSize).putLong(totalBlocks).putLong(journalStart).putLong(journalBlocks).putLong(bitmapStart)
                .putLong(bitmapBlocks).putLong(inodeStart).putLong(inodeBlocks).putLong(inodeCount).putInt(slots);
        return out.written();
    }

    static Layout decode(ByteBuffer payload, long deviceCapacity, int expectedSlots) throws CorruptFileSystemException {
        BlockReader in = new BlockReader(payload, "skeleton superblock payload");
        Layout layout = new Layout(in.getInt(), in.getLong(), in.getLong(), in.getLong(), in.getLong(), in.getLong(),
                in.getLong(), in.getLong(), in.getLong(), in.getInt());
        boolean sane = Integer.bitCount(layout.blockSize) == 1 && layout.blockSize >= 512
                && layout.slots == expectedSlots && layout.recordsPerBlock() >= 1
                && layout.totalBlocks * layout.blockSize <= deviceCapacity && layout.journalStart == 1
                && layout.bitmapStart == 1 + layout.journalBlocks
                && layout.bitmapBlocks == ceil(layout.totalBlocks, layout.blockSize * 8L)
                && layout.inodeStart == layout.bitmapStart + layout.bitmapBlocks
                && layout.inodeCount == layout.inodeBlocks * layout.recordsPerBlock()
                && layout.firstDataBlock() < layout.totalBlocks;
        if (!sane) {
            throw in.corrupt("inconsistent layout " + layout + " for a device of " + deviceCapacity + " bytes");
        }
        return layout;
    }
}
