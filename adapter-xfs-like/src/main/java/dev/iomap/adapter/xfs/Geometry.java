package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapException;
import java.util.Map;

/**
 * Where everything of an xfs-like image lives, in filesystem blocks (= device blocks). Fixed at format
 * time and stored in the superblock. Immutable.
 *
 * <p>Layout: block 0 the superblock; {@code [journalStart, +journalBlocks)} the metadata journal;
 * {@code [inodeTableStart, +inodeTableBlocks)} the inode table; {@code [dataStart, totalBlocks)} the
 * allocation groups, {@code agCount} of them, each {@code agBlocks} long except the last, which takes
 * the remainder. Each allocation group starts with its header (AGF), its free-space leaves and its
 * reference-count leaves; the rest of it holds file data, directory blocks and extent-list blocks.
 *
 * @param blockSize bytes per block
 * @param totalBlocks blocks in the filesystem
 * @param journalStart first journal block
 * @param journalBlocks journal blocks
 * @param inodeTableStart first inode table block
 * @param inodeTableBlocks inode table blocks
 * @param agCount allocation groups
 * @param agBlocks blocks per allocation group (the last one may be longer)
 */
record Geometry(int blockSize, long totalBlocks, long journalStart, long journalBlocks,
        long inodeTableStart, long inodeTableBlocks, int agCount, long agBlocks) {

    /** The root directory's inode number. Inode 0 is never used. */
    static final long ROOT_INO = 1;
    /** The smallest filesystem, in blocks. */
    static final long MIN_BLOCKS = 256;
    /** The smallest journal, in blocks: one operation's changes must fit in half of it. */
    static final long MIN_JOURNAL_BLOCKS = 64;

    /** @return the first block of the first allocation group */
    long dataStart() {
        return inodeTableStart + inodeTableBlocks;
    }

    /** @return inode slots in one inode table block */
    int inodesPerBlock() {
        return Layout.inodesPerBlock(blockSize);
    }

    /** @return inode numbers {@code [0, inodeCount())} exist; 0 is never used */
    long inodeCount() {
        return inodeTableBlocks * inodesPerBlock();
    }

    /** @return the inode table block holding inode {@code ino} */
    long inodeBlock(long ino) {
        return inodeTableStart + ino / inodesPerBlock();
    }

    /** @return the first block of allocation group {@code agno} */
    long agStart(int agno) {
        return dataStart() + agno * agBlocks;
    }

    /** @return the blocks of allocation group {@code agno} */
    long agLength(int agno) {
        return agno == agCount - 1 ? totalBlocks - agStart(agno) : agBlocks;
    }

    /** @return the allocation group holding {@code block}, which is at least {@link #dataStart()} */
    int agOf(long block) {
        return (int) Math.min(agCount - 1, (block - dataStart()) / agBlocks);
    }

    /** @return blocks covered by one free-space leaf (free extents do not touch: at most half start there) */
    long freeLeafSpan() {
        return 2L * Layout.freeLeafCapacity(blockSize);
    }

    /** @return blocks covered by one reference-count leaf (at most one record starts at each block) */
    long refcountLeafSpan() {
        return Layout.refcountLeafCapacity(blockSize);
    }

    /** @return free-space leaves of allocation group {@code agno} */
    int freeLeaves(int agno) {
        return Math.toIntExact(Math.ceilDiv(agLength(agno), freeLeafSpan()));
    }

    /** @return reference-count leaves of allocation group {@code agno} */
    int refcountLeaves(int agno) {
        return Math.toIntExact(Math.ceilDiv(agLength(agno), refcountLeafSpan()));
    }

    /** @return the header blocks at the start of allocation group {@code agno}: AGF and leaves */
    long agHeaderBlocks(int agno) {
        return 1L + freeLeaves(agno) + refcountLeaves(agno);
    }

    /** @return the block of free-space leaf {@code leaf} of allocation group {@code agno} */
    long freeLeafBlock(int agno, int leaf) {
        return agStart(agno) + 1 + leaf;
    }

    /** @return the block of reference-count leaf {@code leaf} of allocation group {@code agno} */
    long refcountLeafBlock(int agno, int leaf) {
        return agStart(agno) + 1 + freeLeaves(agno) + leaf;
    }

    /** @return the type magic of a header block of allocation group {@code agno} */
    int groupBlockType(int agno, long block) {
        if (block == agStart(agno)) {
            return Layout.AG_HEADER;
        }
        return block < refcountLeafBlock(agno, 0) ? Layout.FREE_LEAF : Layout.REFCOUNT_LEAF;
    }

    /**
     * Blocks held back from file data so that metadata (directory and extent-list blocks) can still be
     * allocated when data has filled the device, as XFS's reserve pool.
     *
     * @return the set-aside
     */
    long metadataSetAside() {
        long dataBlocks = totalBlocks - dataStart();
        return Math.clamp(dataBlocks / 100, 16, 4096);
    }

    /** @return the largest file size: 2^44 blocks */
    long maxFileSize() {
        return (long) blockSize << 44;
    }

    /**
     * The geometry mkfs chooses for a device.
     *
     * @param blockSize the block size (the device's)
     * @param totalBlocks blocks on the device
     * @param properties {@code agcount}, {@code inodes}, {@code journalblocks}; others are refused
     * @return the geometry
     * @throws IomapException naming an unknown property, or a value or device size that does not fit
     */
    static Geometry choose(int blockSize, long totalBlocks, Map<String, String> properties)
            throws IomapException {
        for (String key : properties.keySet()) {
            if (!key.equals("agcount") && !key.equals("inodes") && !key.equals("journalblocks")) {
                throw new IomapException("xfs-like: unknown format property '" + key
                        + "' (known: agcount, inodes, journalblocks)");
            }
        }
        if (totalBlocks < MIN_BLOCKS) {
            throw new InvalidRangeException("xfs-like needs at least " + MIN_BLOCKS + " blocks, the device has "
                    + totalBlocks);
        }
        long journal = property(properties, "journalblocks",
                Math.min(totalBlocks / 4, Math.max(128, totalBlocks / 32)), MIN_JOURNAL_BLOCKS, totalBlocks / 4);
        long inodes = property(properties, "inodes", Math.clamp(totalBlocks / 16, 64, 1 << 20), 8, 1 << 24);
        long inodeTableBlocks = Math.ceilDiv(inodes + 1, Layout.inodesPerBlock(blockSize));
        long dataStart = 1 + journal + inodeTableBlocks;
        long dataBlocks = totalBlocks - dataStart;
        long agCount = property(properties, "agcount", dataBlocks >= 4 * 1024 ? 4 : 1, 1, 1024);
        Geometry geometry = new Geometry(blockSize, totalBlocks, 1, journal, 1 + journal, inodeTableBlocks,
                (int) agCount, dataBlocks / agCount);
        for (int agno = 0; agno < agCount; agno++) {
            if (geometry.agBlocks() < 4 * geometry.agHeaderBlocks(agno) + 16) {
                throw new InvalidRangeException("xfs-like: " + agCount + " allocation groups of "
                        + geometry.agBlocks() + " blocks are too small; use fewer (agcount) or a larger device");
            }
        }
        if (dataBlocks < 2 * geometry.metadataSetAside()) {
            throw new InvalidRangeException("xfs-like: the device leaves only " + dataBlocks + " data blocks");
        }
        return geometry;
    }

    private static long property(Map<String, String> properties, String key, long fallback, long min, long max)
            throws InvalidRangeException {
        String value = properties.get(key);
        if (value == null) {
            return fallback;
        }
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new InvalidRangeException("xfs-like: format property " + key + "=" + value + " is not a number");
        }
        if (parsed < min || parsed > max) {
            throw new InvalidRangeException("xfs-like: format property " + key + "=" + parsed + " is outside ["
                    + min + ", " + max + "]");
        }
        return parsed;
    }

    /** @return the largest payload of one metadata block */
    int maxPayload() {
        return MetadataBlock.maxPayload(blockSize);
    }
}
