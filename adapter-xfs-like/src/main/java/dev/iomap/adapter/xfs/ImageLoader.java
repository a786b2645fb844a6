package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.BlockMapping;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentState;
import dev.iomap.adapter.support.FreeSpaceAllocator;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.ns.ChainBlocks;
import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.adapter.support.ns.FileTypeCodes;
import dev.iomap.adapter.support.ns.XattrSet;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapException;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Reads every metadata structure of an image into memory, verifying each block's checksum and each
 * structure's own consistency. Mount uses it strictly (the first problem is a
 * {@link CorruptFileSystemException} naming the structure and its device offset); fsck collects every
 * problem and loads what it can. Reads only; never writes.
 */
final class ImageLoader {
    private final BlockDevice device;
    private final XfsGeometry geometry;
    private final boolean strict;
    private final List<String> problems = new ArrayList<>();

    /** What was loaded. */
    static final class Image {
        final Map<Long, InodeState> inodes = new TreeMap<>();
        AllocationGroup[] groups;
        /** Inode table blocks {@code [0, this)} are written; the rest are never read (all free). */
        long initialisedTableBlocks;
        /** Extent-list blocks read, for fsck's ownership check: block to owner. */
        final Map<Long, Long> listBlocks = new HashMap<>();
    }

    ImageLoader(BlockDevice device, XfsGeometry geometry, boolean strict) {
        this.device = device;
        this.geometry = geometry;
        this.strict = strict;
    }

    List<String> problems() {
        return problems;
    }

    Image load() throws IOException {
        Image image = new Image();
        image.initialisedTableBlocks = loadTableBlock(image, 0);
        for (long index = 1; index < image.initialisedTableBlocks; index++) {
            loadTableBlock(image, index);
        }
        image.groups = new AllocationGroup[geometry.agCount()];
        for (int agno = 0; agno < geometry.agCount(); agno++) {
            image.groups[agno] = loadGroup(agno);
        }
        for (InodeState inode : List.copyOf(image.inodes.values())) {
            if (inode.isDirectory()) {
                loadDirectory(inode);
            }
        }
        return image;
    }

    void problem(String message) throws CorruptFileSystemException {
        if (strict) {
            throw new CorruptFileSystemException(message);
        }
        problems.add(message);
    }

    /**
     * Loads the inodes of one inode table block.
     *
     * @return what the block says of the initialised table blocks (block 0 only; 1 if it is damaged)
     */
    private long loadTableBlock(Image image, long index) throws IOException {
        long block = geometry.inodeTableStart() + index;
        InodeCodec.TableBlock table;
        try {
            table = InodeCodec.decodeTableBlock(MetadataBlock.read(device, block, XfsLayout.INODE_TABLE), geometry, index);
        } catch (CorruptFileSystemException e) {
            problem("inode table: " + e.getMessage());
            return 1;
        }
        for (InodeCodec.Slot slot : table.slots()) {
            if (slot.typeCode() == XfsLayout.TYPE_FREE) {
                continue;
            }
            String where = "inode " + slot.ino() + " (inode table " + XfsLayout.where(block, geometry.blockSize())
                    + ", slot " + slot.ino() % geometry.inodesPerBlock() + ")";
            try {
                image.inodes.put(slot.ino(), inodeOf(image, slot, where));
            } catch (CorruptFileSystemException e) {
                problem(e.getMessage());
            }
        }
        return table.initialisedBlocks();
    }

    private InodeState inodeOf(Image image, InodeCodec.Slot slot, String where) throws IOException {
        if (slot.ino() == 0) {
            throw new CorruptFileSystemException(where + ": inode 0 is never used");
        }
        InodeState inode = new InodeState(slot.ino(), FileTypeCodes.typeOf(slot.typeCode()));
        inode.nlink = slot.nlink();
        inode.diskSize = slot.size();
        inode.parent = slot.parent();
        inode.mode = slot.mode();
        inode.uid = slot.uid();
        inode.gid = slot.gid();
        inode.atime = slot.times().get(0);
        inode.mtime = slot.times().get(1);
        inode.ctime = slot.times().get(2);
        inode.btime = slot.times().get(3);
        inode.rdev = slot.rdev();
        inode.fileFlags = slot.flags() & ~InodeCodec.FLAG_EXTENT_LIST;
        readAttached(inode, slot, where);
        List<Extent> extents = slot.listHead() == 0 ? slot.inline() : readList(image, inode, slot, where);
        if (extents.size() != slot.dataCount() + slot.cowCount()) {
            throw new CorruptFileSystemException(where + ": holds " + extents.size() + " extents, counts say "
                    + slot.dataCount() + " + " + slot.cowCount());
        }
        for (int i = 0; i < extents.size(); i++) {
            Extent extent = extents.get(i);
            checkExtent(extent, where);
            try {
                (i < slot.dataCount() ? inode.data : inode.cow).insert(extent);
            } catch (InvalidRangeException e) {
                throw new CorruptFileSystemException(where + ": " + e.getMessage());
            }
        }
        if (inode.type == FileType.DIRECTORY) {
            inode.directory = new DirectoryBlocks(MetadataBlock.maxPayload(geometry.blockSize()));
        }
        return inode;
    }

    /** Reads the symbolic link's target and the extended attributes, from the slot or their chains. */
    private void readAttached(InodeState inode, InodeCodec.Slot slot, String where) throws IOException {
        if (inode.type == FileType.SYMLINK) {
            if (slot.targetHead() == 0) {
                inode.target = slot.inlineTarget();
            } else {
                byte[] target = ChainBlocks.read(device, XfsLayout.SYMLINK_BLOCK, "symlink", slot.targetHead(), inode.ino,
                        FileNames.MAX_TARGET_BYTES, dataArea(), inode.targetBlocks, where);
                if (target.length != slot.size()) {
                    throw new CorruptFileSystemException(where + ": symlink blocks hold " + target.length
                            + " bytes, the size is " + slot.size());
                }
                InodeCodec.checkTarget(target, where);
                inode.target = target;
            }
        }
        if (slot.xattrHead() != 0) {
            byte[] encoded = ChainBlocks.read(device, XfsLayout.XATTR_BLOCK, "xattr", slot.xattrHead(), inode.ino,
                    XfsLayout.MAX_XATTR_SET_BYTES, dataArea(), inode.xattrBlocks, where);
            inode.xattrs = XattrSet.decode(encoded, where);
            if (inode.xattrBlocks.size() != XfsLayout.chainBlocks(encoded.length, geometry.blockSize())) {
                throw new CorruptFileSystemException(where + ": " + inode.xattrBlocks.size()
                        + " extended-attribute blocks hold " + encoded.length + " bytes");
            }
        }
    }

    private void checkExtent(Extent extent, String where) throws CorruptFileSystemException {
        long end = extent.deviceBlock() + extent.length();
        if (extent.deviceBlock() < geometry.dataStart() || end > geometry.totalBlocks()) {
            throw new CorruptFileSystemException(where + ": extent " + extent + " points outside the data area ["
                    + geometry.dataStart() + ", " + geometry.totalBlocks() + ")");
        }
        if (geometry.agOf(extent.deviceBlock()) != geometry.agOf(end - 1)) {
            throw new CorruptFileSystemException(where + ": extent " + extent + " crosses allocation groups");
        }
        if (extent.endBlock() > geometry.maxFileSize() / geometry.blockSize()) {
            throw new CorruptFileSystemException(where + ": extent " + extent + " lies past the largest file size");
        }
    }

    private List<Extent> readList(Image image, InodeState inode, InodeCodec.Slot slot, String where)
            throws IOException {
        List<Extent> extents = new ArrayList<>();
        Set<Long> seen = new HashSet<>();
        int capacity = XfsLayout.extentListCapacity(geometry.blockSize());
        long block = slot.listHead();
        while (block != 0) {
            if (block < geometry.dataStart() || block >= geometry.totalBlocks() || !seen.add(block)) {
                throw new CorruptFileSystemException(where + ": extent list block " + block
                        + " is outside the data area or repeated");
            }
            InodeCodec.ListBlock list = InodeCodec.decodeListBlock(
                    MetadataBlock.read(device, block, XfsLayout.EXTENT_LIST), capacity);
            if (list.owner() != inode.ino) {
                throw new CorruptFileSystemException(where + ": extent list " + XfsLayout.where(block,
                        geometry.blockSize()) + " belongs to inode " + list.owner());
            }
            extents.addAll(list.extents());
            inode.listBlocks.add(block);
            image.listBlocks.put(block, inode.ino);
            block = list.next();
        }
        if (extents.size() <= XfsLayout.INLINE_EXTENTS) {
            throw new CorruptFileSystemException(where + ": " + extents.size()
                    + " extents in an extent list; they fit in the inode");
        }
        return extents;
    }

    private AllocationGroup loadGroup(int agno) throws IOException {
        long start = geometry.agStart(agno);
        long length = geometry.agLength(agno);
        String where = "allocation group " + agno + " header at " + XfsLayout.where(start, geometry.blockSize());
        FreeSpaceAllocator free = FreeSpaceAllocator.allAllocated(start, length);
        RefcountMap refcounts = new RefcountMap();
        try {
            // The header and the place of free-space leaf 0, which holds a fresh group's free space: one read.
            ByteBuffer headerAndFirstLeaf = BlockIo.read(device, start, 2);
            int blockSize = geometry.blockSize();
            BlockReader reader = MetadataBlock.decode(headerAndFirstLeaf.slice(0, blockSize), start, XfsLayout.AG_HEADER)
                    .reader();
            int storedAgno = reader.getInt();
            int zero = reader.getInt();
            long storedStart = reader.getLong();
            long storedLength = reader.getLong();
            long freeBlocks = reader.getLong();
            long freeExtents = reader.getLong();
            long longest = reader.getLong();
            long refcountRecords = reader.getLong();
            int freeLeaves = reader.getInt();
            int refcountLeaves = reader.getInt();
            if (zero != 0) {
                throw new CorruptFileSystemException(where + ": the reserved field at payload offset 4 is " + zero);
            }
            if (storedAgno != agno || storedStart != start || storedLength != length
                    || freeLeaves != geometry.freeLeaves(agno) || refcountLeaves != geometry.refcountLeaves(agno)) {
                throw new CorruptFileSystemException(where + ": describes group " + storedAgno + " ["
                        + storedStart + ", +" + storedLength + ") with " + freeLeaves + "+" + refcountLeaves
                        + " leaves");
            }
            BitSet inUse = leafBitmap(reader, where, geometry.leaves(agno));
            loadFreeLeaves(agno, free, inUse, headerAndFirstLeaf.slice(blockSize, blockSize));
            loadRefcountLeaves(agno, refcounts, inUse);
            if (free.freeBlocks() != freeBlocks || free.freeExtentCount() != freeExtents
                    || refcounts.size() != refcountRecords) {
                throw new CorruptFileSystemException(where + ": counts " + freeBlocks + " free blocks in "
                        + freeExtents + " extents and " + refcountRecords + " refcount records, leaves hold "
                        + free.freeBlocks() + " in " + free.freeExtentCount() + " and " + refcounts.size());
            }
            if (free.largestFreeExtent() != longest) {
                throw new CorruptFileSystemException(where + ": says the longest free extent is " + longest
                        + " blocks, the leaves' longest is " + free.largestFreeExtent());
            }
        } catch (CorruptFileSystemException e) {
            problem(e.getMessage());
        }
        return new AllocationGroup(geometry, agno, free, refcounts);
    }

    /**
     * Reads a group header's leaf bitmap: one bit per leaf, set if the leaf holds records (only those
     * are ever written); the header ends with it, and the bits past the last leaf are 0.
     */
    private static BitSet leafBitmap(BlockReader reader, String where, int leaves) throws CorruptFileSystemException {
        int bytes = Math.ceilDiv(leaves, Byte.SIZE);
        if (reader.remaining() != bytes) {
            throw new CorruptFileSystemException(where + ": the leaf bitmap takes " + reader.remaining()
                    + " bytes, " + leaves + " leaves need " + bytes);
        }
        BitSet inUse = BitSet.valueOf(reader.getBytes(bytes));
        if (inUse.length() > leaves) {
            throw new CorruptFileSystemException(where + ": the leaf bitmap marks leaf bit " + (inUse.length() - 1)
                    + " in use; the group has " + leaves + " leaves");
        }
        return inUse;
    }

    /** Loads the free-space leaves marked in use; {@code firstLeaf} holds what the place of leaf 0 holds. */
    private void loadFreeLeaves(int agno, FreeSpaceAllocator free, BitSet inUse, ByteBuffer firstLeaf)
            throws IOException {
        long previousEnd = -1;
        for (int leaf = inUse.nextSetBit(0); leaf >= 0 && leaf < geometry.freeLeaves(agno);
                leaf = inUse.nextSetBit(leaf + 1)) {
            long block = geometry.freeLeafBlock(agno, leaf);
            ByteBuffer bytes = leaf == 0 ? firstLeaf : BlockIo.read(device, block, 1);
            BlockReader reader = MetadataBlock.decode(bytes, block, XfsLayout.FREE_LEAF).reader();
            int count = leafHeader(reader, agno, leaf, XfsLayout.freeLeafCapacity(geometry.blockSize()));
            long low = geometry.agDataStart(agno) + leaf * geometry.freeLeafSpan();
            for (int i = 0; i < count; i++) {
                long start = reader.getLong();
                long length = reader.getLong();
                if (length < 1 || start <= previousEnd || start < low || start >= low + geometry.freeLeafSpan()) {
                    throw reader.corrupt("free extent [" + start + ", +" + length + ") is empty, touches the one "
                            + "before, or does not start in this leaf's blocks from " + low);
                }
                try {
                    free.free(start, length);
                } catch (IomapException e) {
                    throw reader.corrupt(e.getMessage());
                }
                previousEnd = start + length;
            }
        }
    }

    private void loadRefcountLeaves(int agno, RefcountMap refcounts, BitSet inUse) throws IOException {
        long previousEnd = geometry.agStart(agno);
        long agEnd = geometry.agStart(agno) + geometry.agLength(agno);
        int first = geometry.freeLeaves(agno);
        for (int bit = inUse.nextSetBit(first); bit >= 0; bit = inUse.nextSetBit(bit + 1)) {
            int leaf = bit - first;
            long block = geometry.refcountLeafBlock(agno, leaf);
            BlockReader reader = MetadataBlock.read(device, block, XfsLayout.REFCOUNT_LEAF).reader();
            int count = leafHeader(reader, agno, leaf, XfsLayout.refcountLeafCapacity(geometry.blockSize()));
            long low = geometry.agDataStart(agno) + leaf * geometry.refcountLeafSpan();
            for (int i = 0; i < count; i++) {
                long start = reader.getLong();
                long length = reader.getLong();
                int refs = reader.getInt();
                if (length < 1 || refs < 2 || start < previousEnd || start < low
                        || start >= low + geometry.refcountLeafSpan() || start + length > agEnd) {
                    throw reader.corrupt("refcount record [" + start + ", +" + length + ") x" + refs
                            + " is empty, below 2, overlapping, or outside its leaf or group");
                }
                refcounts.load(new RefcountMap.Record(start, length, refs));
                previousEnd = start + length;
            }
        }
    }

    private static int leafHeader(BlockReader reader, int agno, int leaf, int capacity)
            throws CorruptFileSystemException {
        int storedAgno = reader.getInt();
        int storedLeaf = reader.getInt();
        int count = reader.getInt();
        int zero = reader.getInt();
        if (storedAgno != agno || storedLeaf != leaf || count < 1 || count > capacity || zero != 0) {
            throw reader.corrupt("leaf of group " + storedAgno + " index " + storedLeaf + " with " + count
                    + " records and reserved field " + zero + ", expected group " + agno + " leaf " + leaf
                    + ", 1 to " + capacity + " records (the group header marks it in use) and 0");
        }
        return count;
    }

    /** @return the blocks a chain block may be in: the data area */
    private BlockRange dataArea() {
        return new BlockRange(geometry.dataStart(), geometry.totalBlocks() - geometry.dataStart());
    }

    private void loadDirectory(InodeState dir) throws IOException {
        String where = "directory inode " + dir.ino;
        long current = -1;
        try {
            if (!dir.cow.isEmpty()) {
                throw new CorruptFileSystemException(where + ": has a COW fork");
            }
            long blocks = dir.data.mappedBlocks();
            if (dir.data.endBlock() != blocks || dir.diskSize != blocks * geometry.blockSize()) {
                throw new CorruptFileSystemException(where + ": size " + dir.diskSize + " and " + blocks
                        + " blocks ending at file block " + dir.data.endBlock() + " disagree");
            }
            for (int index = 0; index < blocks; index++) {
                BlockMapping mapping = dir.data.lookup(index);
                if (!(mapping instanceof Extent extent) || extent.state() != ExtentState.WRITTEN || extent.shared()) {
                    throw new CorruptFileSystemException(where + ": block " + index + " is " + mapping);
                }
                long block = extent.deviceBlockOf(index);
                current = block;
                MetadataBlock read = MetadataBlock.read(device, block, XfsLayout.DIRECTORY);
                dir.directory.decodeBlock(read.reader(), dir.ino, index);
            }
        } catch (CorruptFileSystemException e) {
            problem(current < 0 || e.getMessage().startsWith(where) ? e.getMessage()
                    : where + " block at " + XfsLayout.where(current, geometry.blockSize()) + ": " + e.getMessage());
            dir.directory = new DirectoryBlocks(MetadataBlock.maxPayload(geometry.blockSize()));
        }
    }
}
