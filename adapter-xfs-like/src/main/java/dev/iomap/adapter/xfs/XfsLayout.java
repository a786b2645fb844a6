package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentState;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.ns.ChainBlocks;
import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.adapter.support.ns.FileTypeCodes;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.InvalidRangeException;

/**
 * Type magics, record sizes and capacities of the on-device structures, and the 28-byte extent record
 * they share. Byte layouts are in the module README. Stateless.
 */
final class XfsLayout {
    /** Inode table block. */
    static final int INODE_TABLE = MetadataBlock.magic("XINO");
    /** Extent-list block: the extents of an inode whose forks do not fit in its slot. */
    static final int EXTENT_LIST = MetadataBlock.magic("XBMX");
    /** Directory block. */
    static final int DIRECTORY = MetadataBlock.magic("XDIR");
    /** Allocation group header. */
    static final int AG_HEADER = MetadataBlock.magic("XAGF");
    /** Free-space leaf (free extents by start block). */
    static final int FREE_LEAF = MetadataBlock.magic("XBNO");
    /** Reference-count leaf (shared extents by start block). */
    static final int REFCOUNT_LEAF = MetadataBlock.magic("XRFC");
    /** Symbolic-link target block: a target too long for the slot, in a chain. */
    static final int SYMLINK_BLOCK = MetadataBlock.magic("XSYM");
    /** Extended-attribute block: an inode's encoded attribute set, in a chain. */
    static final int XATTR_BLOCK = MetadataBlock.magic("XATR");

    /** Bytes of one extent record. */
    static final int EXTENT_BYTES = 28;
    /** Bytes before the inline area inside an inode slot. */
    static final int INODE_CORE_BYTES = 128;
    /** Extents (both forks together) stored inside the inode slot. */
    static final int INLINE_EXTENTS = 6;
    /** Bytes of the slot's inline area: the extents, or a symbolic link's short target. */
    static final int INLINE_BYTES = INLINE_EXTENTS * EXTENT_BYTES;
    /** Bytes of one inode slot. */
    static final int INODE_BYTES = INODE_CORE_BYTES + INLINE_BYTES;
    /** The longest symbolic-link target kept in the slot; longer ones go to symlink blocks. */
    static final int INLINE_TARGET_BYTES = INLINE_BYTES;
    /** Header of a chain block payload (symlink and xattr blocks): owner (8), next (8), index (4), bytes (4). */
    static final int CHAIN_HEADER = ChainBlocks.HEADER_BYTES;
    /**
     * The most bytes an inode's encoded extended attributes take (count and every name and value with
     * their lengths): two attributes of the largest value with the longest names fit.
     */
    static final int MAX_XATTR_SET_BYTES = 128 * 1024 + 1024;
    /** Header of an inode table block payload: first inode (8), slots (4), reserved (4). */
    static final int INODE_TABLE_HEADER = 16;
    /** Header of an extent-list block payload: owner (8), next block (8), count (4), reserved (4). */
    static final int EXTENT_LIST_HEADER = 24;
    /** Header of a directory block payload: directory inode (8), block index (4), count (4). */
    static final int DIRECTORY_HEADER = DirectoryBlocks.HEADER_BYTES;
    /** Header of a leaf payload: AG number (4), leaf index (4), count (4), reserved (4). */
    static final int LEAF_HEADER = 16;
    /** Bytes of one free extent in a free-space leaf: start (8), length (8). */
    static final int FREE_RECORD_BYTES = 16;
    /** Bytes of one record in a reference-count leaf: start (8), length (8), count (4). */
    static final int REFCOUNT_RECORD_BYTES = 20;
    /** Longest name, in bytes (a name is a byte string, stored as it is: see {@link FileNames}). */
    static final int MAX_NAME_BYTES = FileNames.MAX_NAME_BYTES;
    /** Fixed bytes of a directory entry: inode (8), type (1), name length (4). */
    static final int DIRENT_FIXED_BYTES = DirectoryBlocks.ENTRY_FIXED_BYTES;

    /** Inode type codes. */
    static final int TYPE_FREE = FileTypeCodes.FREE;
    static final int TYPE_REGULAR = FileTypeCodes.REGULAR;
    static final int TYPE_DIRECTORY = FileTypeCodes.DIRECTORY;
    static final int TYPE_SYMLINK = FileTypeCodes.SYMLINK;

    private static final int STATE_UNWRITTEN = 1;
    private static final int SHARED_FLAG = 1 << 2;

    private XfsLayout() {
    }

    static int inodesPerBlock(int blockSize) {
        return (MetadataBlock.maxPayload(blockSize) - INODE_TABLE_HEADER) / INODE_BYTES;
    }

    static int extentListCapacity(int blockSize) {
        return (MetadataBlock.maxPayload(blockSize) - EXTENT_LIST_HEADER) / EXTENT_BYTES;
    }

    static int freeLeafCapacity(int blockSize) {
        return (MetadataBlock.maxPayload(blockSize) - LEAF_HEADER) / FREE_RECORD_BYTES;
    }

    static int refcountLeafCapacity(int blockSize) {
        return (MetadataBlock.maxPayload(blockSize) - LEAF_HEADER) / REFCOUNT_RECORD_BYTES;
    }

    /** @return bytes of content one chain block holds */
    static int chainCapacity(int blockSize) {
        return ChainBlocks.capacity(blockSize);
    }

    /** @return chain blocks {@code bytes} bytes of content take */
    static int chainBlocks(int bytes, int blockSize) {
        return ChainBlocks.blocksFor(bytes, blockSize);
    }

    /**
     * Writes one extent record: file block, length, device block, flags (bit 0 unwritten, bit 2 shared).
     * Delayed allocations are in-memory reservations and are never written.
     */
    static void putExtent(BlockWriter writer, Extent extent) throws InvalidRangeException {
        if (extent.state() == ExtentState.DELALLOC) {
            throw new IllegalArgumentException("a delalloc extent is never written: " + extent);
        }
        int flags = (extent.state() == ExtentState.UNWRITTEN ? STATE_UNWRITTEN : 0)
                | (extent.shared() ? SHARED_FLAG : 0);
        writer.putLong(extent.fileBlock()).putLong(extent.length()).putLong(extent.deviceBlock()).putInt(flags);
    }

    /** Reads one extent record written by {@link #putExtent}. */
    static Extent getExtent(BlockReader reader) throws CorruptFileSystemException {
        long fileBlock = reader.getLong();
        long length = reader.getLong();
        long deviceBlock = reader.getLong();
        int flags = reader.getInt();
        if ((flags & ~(STATE_UNWRITTEN | SHARED_FLAG)) != 0) {
            throw reader.corrupt("extent flags " + Integer.toHexString(flags) + " are not known");
        }
        ExtentState state = (flags & STATE_UNWRITTEN) != 0 ? ExtentState.UNWRITTEN : ExtentState.WRITTEN;
        try {
            return new Extent(fileBlock, length, deviceBlock, state, (flags & SHARED_FLAG) != 0);
        } catch (IllegalArgumentException e) {
            throw reader.corrupt("bad extent: " + e.getMessage());
        }
    }

    /** @return "block N (device offset X)" */
    static String where(long block, int blockSize) {
        return "block " + block + " (device offset " + block * blockSize + ")";
    }
}
