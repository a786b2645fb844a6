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
 * what is left (at most {@code agBlocks}). Each allocation group starts with its header (AGF), the
 * places of its free-space leaves and of its reference-count leaves (only the leaves the header marks
 * in use are written); the rest of it holds file data, directory blocks and extent-list blocks.
 *
 * <p><b>Limits.</b> One group header addresses at most {@link #maxAgBlocks(int)} blocks (its leaf
 * bitmap has a bit per leaf and fits in the header's block) and a filesystem has at most
 * {@link #MAX_AG_COUNT} groups, so the format addresses at most {@link #maxBlocks(int)} blocks.
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
record XfsGeometry(int blockSize, long totalBlocks, long journalStart, long journalBlocks,
        long inodeTableStart, long inodeTableBlocks, int agCount, long agBlocks) {

    /** The root directory's inode number. Inode 0 is never used. */
    static final long ROOT_INO = 1;
    /** The smallest filesystem, in blocks. */
    static final long MIN_BLOCKS = 256;
    /** The smallest journal, in blocks: one operation's changes must fit in half of it. */
    static final long MIN_JOURNAL_BLOCKS = 64;
    /**
     * The largest default journal, in bytes: the journal keeps what it logged in memory until a
     * checkpoint, so its size bounds that memory (a larger one can be asked for with
     * {@code journalblocks}).
     */
    static final long MAX_DEFAULT_JOURNAL_BYTES = 64L << 20;
    /** The largest journal, in bytes, as XFS's log. */
    static final long MAX_JOURNAL_BYTES = 2L << 30;
    /** Device bytes per inode slot of the default format ({@code mke2fs}'s default inode ratio). */
    static final long BYTES_PER_INODE = 16 << 10;
    /**
     * The most allocation groups: a mount reads every group header and keeps a small summary of each
     * group in memory (XFS's per-AG structures), so their number is bounded.
     */
    static final int MAX_AG_COUNT = 1 << 16;
    /** Bytes of a group header's payload before its leaf bitmap. */
    static final int AG_HEADER_FIXED_BYTES = 64;

    /** @return the first block of the first allocation group */
    long dataStart() {
        return inodeTableStart + inodeTableBlocks;
    }

    /** @return inode slots in one inode table block */
    int inodesPerBlock() {
        return XfsLayout.inodesPerBlock(blockSize);
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

    /** @return blocks of the allocation groups together */
    long dataBlocks() {
        return totalBlocks - dataStart();
    }

    /** @return the allocation group holding {@code block}, which is at least {@link #dataStart()} */
    int agOf(long block) {
        return (int) Math.min(agCount - 1, (block - dataStart()) / agBlocks);
    }

    /** @return blocks covered by one free-space leaf (free extents do not touch: at most half start there) */
    long freeLeafSpan() {
        return freeLeafSpan(blockSize);
    }

    /** @return blocks covered by one reference-count leaf (at most one record starts at each block) */
    long refcountLeafSpan() {
        return refcountLeafSpan(blockSize);
    }

    /** @return free-space leaves of allocation group {@code agno} */
    int freeLeaves(int agno) {
        return Math.toIntExact(Math.ceilDiv(agLength(agno), freeLeafSpan()));
    }

    /** @return reference-count leaves of allocation group {@code agno} */
    int refcountLeaves(int agno) {
        return Math.toIntExact(Math.ceilDiv(agLength(agno), refcountLeafSpan()));
    }

    /** @return leaves of allocation group {@code agno}, free-space ones then reference-count ones */
    int leaves(int agno) {
        return freeLeaves(agno) + refcountLeaves(agno);
    }

    /** @return the header blocks at the start of allocation group {@code agno}: AGF and leaves */
    long agHeaderBlocks(int agno) {
        return 1L + freeLeaves(agno) + refcountLeaves(agno);
    }

    /**
     * @return the first block of allocation group {@code agno} after its header blocks: the first it
     *     allocates, and where the spans of its leaves start
     */
    long agDataStart(int agno) {
        return agStart(agno) + agHeaderBlocks(agno);
    }

    /** @return the free-space leaf that holds free extents starting at {@code block}, a data block of {@code agno} */
    int freeLeafOf(int agno, long block) {
        return Math.toIntExact((block - agDataStart(agno)) / freeLeafSpan());
    }

    /** @return the reference-count leaf that holds records starting at {@code block}, a data block of {@code agno} */
    int refcountLeafOf(int agno, long block) {
        return Math.toIntExact((block - agDataStart(agno)) / refcountLeafSpan());
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
            return XfsLayout.AG_HEADER;
        }
        return block < refcountLeafBlock(agno, 0) ? XfsLayout.FREE_LEAF : XfsLayout.REFCOUNT_LEAF;
    }

    /**
     * Blocks held back from file data so that metadata (directory and extent-list blocks) can still be
     * allocated when data has filled the device, as XFS's reserve pool.
     *
     * @return the set-aside
     */
    long metadataSetAside() {
        return Math.clamp(dataBlocks() / 100, 16, 4096);
    }

    /** @return the largest file size: 2^44 blocks */
    long maxFileSize() {
        return (long) blockSize << 44;
    }

    /** @return blocks covered by one free-space leaf of {@code blockSize}-byte blocks */
    static long freeLeafSpan(int blockSize) {
        return 2L * XfsLayout.freeLeafCapacity(blockSize);
    }

    /** @return blocks covered by one reference-count leaf of {@code blockSize}-byte blocks */
    static long refcountLeafSpan(int blockSize) {
        return XfsLayout.refcountLeafCapacity(blockSize);
    }

    /** @return leaves a group header's bitmap has room for: one bit each, after the fixed fields */
    static long leafBitmapCapacity(int blockSize) {
        return 8L * (MetadataBlock.maxPayload(blockSize) - AG_HEADER_FIXED_BYTES);
    }

    /**
     * The largest allocation group: the most blocks whose free-space and reference-count leaves all
     * have a bit in the group header's leaf bitmap (4,624,334 blocks, 17.6 GiB, at 4 KiB).
     *
     * @param blockSize the block size
     * @return blocks
     */
    static long maxAgBlocks(int blockSize) {
        long bits = leafBitmapCapacity(blockSize);
        long low = 1;
        long high = bits * refcountLeafSpan(blockSize);
        while (low < high) {
            long middle = low + (high - low + 1) / 2;
            if (Math.ceilDiv(middle, freeLeafSpan(blockSize)) + Math.ceilDiv(middle, refcountLeafSpan(blockSize))
                    <= bits) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        return low;
    }

    /**
     * The most blocks the format addresses: {@link #MAX_AG_COUNT} groups of {@link #maxAgBlocks}, and
     * never more bytes than a signed 64-bit device offset reaches.
     *
     * @param blockSize the block size
     * @return blocks (303,060,353,024 of 4 KiB, 1.1 PiB)
     */
    static long maxBlocks(int blockSize) {
        return Math.min(MAX_AG_COUNT * maxAgBlocks(blockSize), Long.MAX_VALUE / blockSize);
    }

    /**
     * The default number of inode slots: one per {@value #BYTES_PER_INODE} bytes of the device, as
     * {@code mke2fs}'s default inode ratio, so that a file system of small files (a source tree, a mail
     * spool) runs out of space before it runs out of inodes; at least 64, at most 2^22.
     */
    static long defaultInodes(int blockSize, long totalBlocks) {
        return Math.clamp(totalBlocks * blockSize / BYTES_PER_INODE, 64, 1 << 22);
    }

    /**
     * The geometry mkfs chooses for a device.
     *
     * @param blockSize the block size (the device's)
     * @param totalBlocks blocks on the device, at most {@link #maxBlocks}
     * @param properties {@code agcount}, {@code inodes}, {@code journalblocks}; others are refused
     * @return the geometry
     * @throws IomapException naming an unknown property, or a value or device size that does not fit
     */
    static XfsGeometry choose(int blockSize, long totalBlocks, Map<String, String> properties)
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
        long defaultJournal = Math.clamp(totalBlocks / 32, 128, MAX_DEFAULT_JOURNAL_BYTES / blockSize);
        long journal = property(properties, "journalblocks", Math.min(totalBlocks / 4, defaultJournal),
                MIN_JOURNAL_BLOCKS, Math.min(totalBlocks / 4, MAX_JOURNAL_BYTES / blockSize));
        long inodes = property(properties, "inodes", defaultInodes(blockSize, totalBlocks), 8, 1 << 24);
        long inodeTableBlocks = Math.ceilDiv(inodes + 1, XfsLayout.inodesPerBlock(blockSize));
        long dataStart = 1 + journal + inodeTableBlocks;
        long dataBlocks = totalBlocks - dataStart;
        if (dataBlocks < 1) {
            throw new InvalidRangeException("xfs-like: the journal and inode table leave no data blocks");
        }
        long fewestGroups = Math.ceilDiv(dataBlocks, maxAgBlocks(blockSize));
        long agCount = property(properties, "agcount", Math.max(fewestGroups, dataBlocks >= 4 * 1024 ? 4 : 1), 1,
                MAX_AG_COUNT);
        if (agCount < fewestGroups) {
            throw new InvalidRangeException("xfs-like: " + agCount + " allocation groups of " + dataBlocks
                    + " blocks would be larger than one group header addresses (" + maxAgBlocks(blockSize)
                    + " blocks): use agcount of at least " + fewestGroups);
        }
        XfsGeometry geometry = new XfsGeometry(blockSize, totalBlocks, 1, journal, 1 + journal, inodeTableBlocks,
                (int) agCount, Math.ceilDiv(dataBlocks, agCount));
        for (int agno : new int[] {0, geometry.agCount() - 1}) {
            if (geometry.agLength(agno) < 4 * geometry.agHeaderBlocks(agno) + 16) {
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
