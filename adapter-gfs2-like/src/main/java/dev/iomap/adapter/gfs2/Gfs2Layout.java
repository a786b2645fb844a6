package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.SuperblockCodec;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.UUID;

/**
 * Where everything is on a gfs2-like device, as the superblock records it: block 0 the superblock,
 * then {@code journals} per-node journals of {@code journalBlocks} blocks each, then resource groups
 * of {@code rgBlocks} blocks (the last one may be shorter). Immutable.
 *
 * <p>The superblock's payload: block size, total blocks, journals, journal blocks, resource group
 * blocks, root dinode, the label's length and bytes, then the filesystem's UUID (16 bytes, most
 * significant half first). Images made before mkfs wrote a UUID end after the label; their
 * {@link #filesystemUuid} is derived from journal 0's random id.
 *
 * @param blockSize filesystem (and device) block size
 * @param totalBlocks blocks in the filesystem
 * @param journals per-node journals (the most nodes that may mount at once)
 * @param journalBlocks blocks of each journal
 * @param rgBlocks blocks of each resource group but the last
 * @param rootIno the root directory's dinode block
 * @param label the label given to mkfs
 * @param uuid the filesystem's UUID written at mkfs, or null for an image made before mkfs wrote one
 */
record Gfs2Layout(int blockSize, long totalBlocks, int journals, long journalBlocks, long rgBlocks, long rootIno,
        String label, UUID uuid) {

    /** The superblock's codec: magic {@code GFS2LIKE}, version 1. */
    static final SuperblockCodec CODEC = new SuperblockCodec("gfs2-like superblock", "GFS2LIKE", 1);

    /** Bytes of the superblock payload's fixed fields, before the label's bytes. */
    static final int FIXED_BYTES = 44;

    /** First block of journal 0. */
    static final long JOURNAL_START = 1;

    /** Bytes of the UUID after the label. */
    static final int UUID_BYTES = 16;

    /** A layout without a UUID (what mkfs plans; {@link #withUuid} adds the one it writes). */
    Gfs2Layout(int blockSize, long totalBlocks, int journals, long journalBlocks, long rgBlocks, long rootIno,
            String label) {
        this(blockSize, totalBlocks, journals, journalBlocks, rgBlocks, rootIno, label, null);
    }

    /** @return this layout with {@code uuid} as the filesystem's UUID */
    Gfs2Layout withUuid(UUID uuid) {
        return new Gfs2Layout(blockSize, totalBlocks, journals, journalBlocks, rgBlocks, rootIno, label, uuid);
    }

    /**
     * The filesystem's UUID: the one mkfs wrote, or, for an image made before mkfs wrote one, a UUID
     * derived from journal 0's id (a random number its mkfs wrote, never changed after): the same at
     * every mount of the image, different for images formatted alike. A copy of an image has its UUID
     * either way, as with any filesystem's UUID.
     *
     * @param device the filesystem's device
     * @return the UUID
     * @throws IOException if journal 0's superblock cannot be read (an image without a UUID only)
     */
    UUID filesystemUuid(BlockDevice device) throws IOException {
        if (uuid != null) {
            return uuid;
        }
        long journalId = Journal.open(device, journalStart(0), journalBlocks).journalId();
        return UUID.nameUUIDFromBytes(("gfs2-like journal 0 id " + Long.toHexString(journalId))
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Type magic of a resource group header. */
    static final int RGRP_TYPE = MetadataBlock.magic("GRGH");
    /** Type magic of a resource group bitmap block. */
    static final int BITMAP_TYPE = MetadataBlock.magic("GRBM");
    /** Type magic of a dinode. */
    static final int DINODE_TYPE = MetadataBlock.magic("GDIN");
    /** Type magic of an indirect block. */
    static final int INDIRECT_TYPE = MetadataBlock.magic("GIND");
    /** Type magic of a chain block (directory, symbolic link target or extended attribute bytes). */
    static final int CHAIN_TYPE = MetadataBlock.magic("GCHN");

    /**
     * Encodes a metadata block whose payload is known to fit.
     *
     * @param block the block
     * @param blockSize the block size
     * @return its image
     */
    static ByteBuffer image(MetadataBlock block, int blockSize) {
        try {
            return block.encode(blockSize);
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("a payload sized for the block does not fit: " + block, e);
        }
    }

    /** @return the first block of journal {@code index} */
    long journalStart(int index) {
        return JOURNAL_START + index * journalBlocks;
    }

    /** @return the first block of resource group 0 */
    long rgStart() {
        return JOURNAL_START + journals * journalBlocks;
    }

    /** @return how many resource groups there are */
    int rgCount() {
        return (int) ((totalBlocks - rgStart() + rgBlocks - 1) / rgBlocks);
    }

    /** @return the first block of resource group {@code index} */
    long rgStart(int index) {
        return rgStart() + index * rgBlocks;
    }

    /** @return blocks of resource group {@code index} (the last takes what is left) */
    long rgLength(int index) {
        return Math.min(rgBlocks, totalBlocks - rgStart(index));
    }

    /** @return the resource group holding {@code block}, which must be at or past {@link #rgStart()} */
    int rgOf(long block) {
        return (int) ((block - rgStart()) / rgBlocks);
    }

    /** @return blocks one bitmap block describes (2 bits each) */
    int blocksPerBitmap() {
        return (MetadataBlock.maxPayload(blockSize) - ResourceGroup.BITMAP_HEADER) * 4;
    }

    /** @return bitmap blocks of a resource group of {@code length} blocks */
    int bitmapBlocks(long length) {
        return (int) ((length + blocksPerBitmap() - 1) / blocksPerBitmap());
    }

    /** @return bytes of file data a dinode holds while stuffed */
    int stuffedCapacity() {
        return MetadataBlock.maxPayload(blockSize) - Dinode.HEADER_BYTES;
    }

    /** @return block pointers a dinode holds (height 1 and up) */
    int dinodePointers() {
        return stuffedCapacity() / 8;
    }

    /** @return block pointers an indirect block holds */
    int indirectPointers() {
        return (MetadataBlock.maxPayload(blockSize) - Indirect.HEADER_BYTES) / 8;
    }

    /**
     * @param height a tree height, at least 1
     * @return blocks of file data a tree of that height can address (saturating at Long.MAX_VALUE)
     */
    long heightBlocks(int height) {
        long blocks = dinodePointers();
        for (int h = 1; h < height; h++) {
            if (blocks > Long.MAX_VALUE / indirectPointers()) {
                return Long.MAX_VALUE;
            }
            blocks *= indirectPointers();
        }
        return blocks;
    }

    /**
     * @param blocks file blocks {@code [0, blocks)}, all mapped
     * @return the indirect blocks a file's tree needs to map them: one per pointer block's worth of the
     *     level below, at each level between the dinode and the data
     */
    long indirectBlocksFor(long blocks) {
        if (blocks <= 0) {
            return 0;
        }
        int height = 1;
        while (heightBlocks(height) < blocks) {
            height++;
        }
        long total = 0;
        long level = blocks;
        for (int h = 1; h < height; h++) {
            level = Math.ceilDiv(level, (long) indirectPointers());
            total += level;
        }
        return total;
    }

    /**
     * The most data blocks one file can be given out of {@code free} blocks, the indirect blocks that map
     * them being taken from {@code free} too.
     *
     * @param free free blocks, at least 0
     * @return the largest {@code d} with {@code d + indirectBlocksFor(d) <= free}
     */
    long dataBlocksWithin(long free) {
        long low = 0;
        long high = Math.max(0, free);
        while (low < high) {
            long mid = low + (high - low + 1) / 2;
            if (mid + indirectBlocksFor(mid) <= free) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    /**
     * Writes the superblock to block 0 (not flushed).
     *
     * @param device the device
     * @throws IOException if the device fails
     */
    void write(BlockDevice device) throws IOException {
        ByteBuffer payload = ByteBuffer.allocate(SuperblockCodec.maxPayload(blockSize)).order(ByteOrder.LITTLE_ENDIAN);
        payload.putInt(blockSize).putLong(totalBlocks).putInt(journals).putLong(journalBlocks).putLong(rgBlocks)
                .putLong(rootIno);
        byte[] text = label.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        payload.putInt(text.length).put(text);
        if (uuid != null) {
            payload.putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
        }
        payload.flip();
        CODEC.write(device, 0, payload);
    }

    /**
     * Reads and checks the superblock of a device whose block size is the filesystem's.
     *
     * @param device the device
     * @return the layout
     * @throws CorruptFileSystemException if block 0 is not a sound gfs2-like superblock
     * @throws IOException if the device fails
     */
    static Gfs2Layout read(BlockDevice device) throws IOException {
        ByteBuffer p = CODEC.read(device, 0).payload().order(ByteOrder.LITTLE_ENDIAN);
        if (p.remaining() < FIXED_BYTES) {
            throw new CorruptFileSystemException("gfs2-like superblock: payload of " + p.remaining()
                    + " bytes, shorter than its " + FIXED_BYTES + " bytes of fields");
        }
        int blockSize = p.getInt();
        if (blockSize != device.blockSize()) {
            throw new CorruptFileSystemException("gfs2-like superblock says " + blockSize
                    + "-byte blocks; the device has " + device.blockSize() + "-byte blocks (open it with the"
                    + " filesystem's block size)");
        }
        long total = p.getLong();
        int journals = p.getInt();
        long journalBlocks = p.getLong();
        long rgBlocks = p.getLong();
        long root = p.getLong();
        int labelLength = p.getInt();
        if (labelLength < 0 || labelLength > p.remaining()) {
            throw new CorruptFileSystemException("gfs2-like superblock: bad label length " + labelLength);
        }
        byte[] text = new byte[labelLength];
        p.get(text);
        UUID uuid = p.remaining() >= UUID_BYTES ? new UUID(p.getLong(), p.getLong()) : null;
        Gfs2Layout layout = new Gfs2Layout(blockSize, total, journals, journalBlocks, rgBlocks, root,
                new String(text, java.nio.charset.StandardCharsets.UTF_8), uuid);
        String problem = layout.problem(device.capacity() / blockSize);
        if (problem != null) {
            throw new CorruptFileSystemException("gfs2-like superblock: " + problem);
        }
        return layout;
    }

    /**
     * @param deviceBlocks blocks of the device
     * @return why this layout is unusable on such a device, or null if it is sound
     */
    String problem(long deviceBlocks) {
        if (totalBlocks > deviceBlocks || totalBlocks < 16) {
            return "it has " + totalBlocks + " blocks; the device has " + deviceBlocks;
        }
        if (journals < 1 || journals > 64 || journalBlocks < 16 || journalBlocks > totalBlocks) {
            return journals + " journals of " + journalBlocks + " blocks (1 to 64 journals of at least 16 blocks)";
        }
        if (rgBlocks < 8 || rgStart() + 8 > totalBlocks) {
            return "resource groups of " + rgBlocks + " blocks from block " + rgStart() + " do not fit in "
                    + totalBlocks + " blocks";
        }
        if (!inDataArea(rootIno)) {
            return "root dinode " + rootIno + " is outside the resource groups";
        }
        return null;
    }

    /**
     * @param block a block number
     * @return whether a dinode, data, indirect or chain block may be there: inside a resource group,
     *     past its header and bitmap blocks
     */
    boolean inDataArea(long block) {
        if (block < rgStart() || block >= totalBlocks) {
            return false;
        }
        int g = rgOf(block);
        return block - rgStart(g) > bitmapBlocks(rgLength(g));
    }

    /**
     * Checks a block pointer read from the device (0, a hole or the end of a chain, is allowed).
     *
     * @param pointer the pointer
     * @param what what holds it, for the message
     * @throws CorruptFileSystemException if it is neither 0 nor in {@link #inDataArea the data area}
     */
    void checkPointer(long pointer, String what) throws CorruptFileSystemException {
        if (pointer != 0 && !inDataArea(pointer)) {
            throw new CorruptFileSystemException(what + " points at block " + pointer
                    + ", outside the resource groups' data blocks");
        }
    }

    /**
     * @param block a block number
     * @throws InvalidRangeException if it is not inside a resource group
     */
    void checkInRgrps(long block) throws InvalidRangeException {
        if (block < rgStart() || block >= totalBlocks) {
            throw new InvalidRangeException("block " + block + " is outside the resource groups [" + rgStart()
                    + ", " + totalBlocks + ")");
        }
    }
}
