package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockSizeView;
import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.adapter.support.SuperblockCodec;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The superblock (block 0): the geometry, whether the image was cleanly unmounted, and the label. Framed
 * by {@link SuperblockCodec} (magic {@code XFS-LIKE}, version, length, CRC32C). Written directly, never
 * through the journal: at mkfs, at mount (clean = false), at a label change and at unmount (clean =
 * true), each time followed by a flush.
 *
 * @param geometry where everything is
 * @param clean whether the image was unmounted cleanly (the journal is empty)
 * @param uuid a random identifier chosen at mkfs
 * @param label the label, at most 32 bytes of UTF-8
 */
record XfsSuperblock(XfsGeometry geometry, boolean clean, long uuid, String label) {
    /**
     * The format version written and the only one read: 3 since inode slots hold mode, owner, four
     * nanosecond times, symbolic links and extended attributes (2 wrote group leaves and inode table
     * blocks when first used). The codec refuses any other in one line naming both versions; nothing
     * migrates an older image.
     */
    static final int VERSION = 3;
    static final SuperblockCodec CODEC = new SuperblockCodec("xfs-like", "XFS-LIKE", VERSION);
    static final int MAX_LABEL_BYTES = 32;
    private static final int PAYLOAD_BYTES = 128;

    XfsSuperblock withClean(boolean isClean) {
        return new XfsSuperblock(geometry, isClean, uuid, label);
    }

    XfsSuperblock withLabel(String newLabel) {
        return new XfsSuperblock(geometry, clean, uuid, newLabel);
    }

    void write(BlockDevice device) throws IOException {
        XfsGeometry g = geometry;
        BlockWriter payload = BlockWriter.allocate(PAYLOAD_BYTES, "xfs-like superblock payload")
                .putInt(g.blockSize())
                .putLong(g.totalBlocks())
                .putLong(g.journalStart())
                .putLong(g.journalBlocks())
                .putLong(g.inodeTableStart())
                .putLong(g.inodeTableBlocks())
                .putInt(g.agCount())
                .putLong(g.agBlocks())
                .putLong(XfsGeometry.ROOT_INO)
                .putInt(clean ? 1 : 0)
                .putLong(uuid)
                .putString(label);
        CODEC.write(device, 0, payload.written());
    }

    /**
     * Reads and checks the superblock of a device, through the device's own first block (the payload
     * fits in 512 bytes); the caller then sees the device in filesystem blocks ({@link BlockSizeView}).
     *
     * @throws CorruptFileSystemException if it is foreign, damaged, or does not fit the device
     */
    static XfsSuperblock read(BlockDevice device) throws IOException {
        if (device.capacity() < device.blockSize()) {
            throw new CorruptFileSystemException("not an xfs-like image: the device is empty");
        }
        BlockReader reader = new BlockReader(CODEC.read(device, 0).payload(),
                "xfs-like superblock payload at block 0 (device offset 0)");
        int blockSize = reader.getInt();
        long totalBlocks = reader.getLong();
        long journalStart = reader.getLong();
        long journalBlocks = reader.getLong();
        long inodeTableStart = reader.getLong();
        long inodeTableBlocks = reader.getLong();
        int agCount = reader.getInt();
        long agBlocks = reader.getLong();
        long rootIno = reader.getLong();
        int clean = reader.getInt();
        long uuid = reader.getLong();
        String label = reader.getString();
        String where = "xfs-like superblock at device offset 0";
        if (Integer.bitCount(blockSize) != 1 || blockSize < device.blockSize() || blockSize > 65536) {
            throw new CorruptFileSystemException(where + ": block size " + blockSize
                    + " is not a power of two from the device's " + device.blockSize() + " to 65536");
        }
        if (totalBlocks < XfsGeometry.MIN_BLOCKS || totalBlocks > device.capacity() / blockSize
                || totalBlocks > XfsGeometry.maxBlocks(blockSize)) {
            throw new CorruptFileSystemException(where + ": " + totalBlocks + " blocks do not fit the device's "
                    + device.capacity() / blockSize + " or the format's " + XfsGeometry.maxBlocks(blockSize));
        }
        if (journalStart != 1 || journalBlocks < XfsGeometry.MIN_JOURNAL_BLOCKS || inodeTableStart != journalStart + journalBlocks
                || inodeTableBlocks < 1 || inodeTableBlocks > totalBlocks || rootIno != XfsGeometry.ROOT_INO
                || (clean & ~1) != 0 || agCount < 1 || agCount > XfsGeometry.MAX_AG_COUNT || agBlocks < 16
                || agBlocks > XfsGeometry.maxAgBlocks(blockSize)
                || !groupsTile(totalBlocks - inodeTableStart - inodeTableBlocks, agCount, agBlocks)) {
            throw new CorruptFileSystemException(where + ": inconsistent geometry (journal " + journalStart + "+"
                    + journalBlocks + ", inode table " + inodeTableStart + "+" + inodeTableBlocks + ", "
                    + agCount + " AGs of " + agBlocks + " blocks, root " + rootIno + ", clean " + clean + ")");
        }
        XfsGeometry geometry = new XfsGeometry(blockSize, totalBlocks, journalStart, journalBlocks, inodeTableStart,
                inodeTableBlocks, agCount, agBlocks);
        return new XfsSuperblock(geometry, clean == 1, uuid, label);
    }

    /** @return whether {@code agCount} groups of {@code agBlocks}, the last one shorter or not, make the data area */
    private static boolean groupsTile(long dataBlocks, int agCount, long agBlocks) {
        return dataBlocks > (agCount - 1) * agBlocks && dataBlocks <= agCount * agBlocks;
    }

    static void checkLabel(String label) throws InvalidRangeException {
        if (label.getBytes(StandardCharsets.UTF_8).length > MAX_LABEL_BYTES) {
            throw new InvalidRangeException("xfs-like: label longer than " + MAX_LABEL_BYTES + " bytes");
        }
    }
}
