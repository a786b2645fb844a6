package dev.iomap.adapter.xfs;

import java.util.Set;
import java.util.EnumSet;
import dev.iomap.api.FileFlag;
import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.ns.FileTypeCodes;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NewInodeAttributes;
import java.nio.ByteBuffer;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;

/**
 * Encoding of inode table blocks, inode slots and extent-list blocks (layouts in the README).
 * Stateless.
 */
final class InodeCodec {
    /** Slot flag: the extents are in extent-list blocks, not in the slot. */
    static final int FLAG_EXTENT_LIST = 1;
    /**
     * The inode flags (chattr) in the slot's flags byte, bits 1 to 6: {@link FileFlag#SYNC},
     * {@link FileFlag#IMMUTABLE}, {@link FileFlag#APPEND}, {@link FileFlag#NO_DUMP}, {@link FileFlag#NO_ATIME},
     * {@link FileFlag#DAX}; an image written before they were kept has 0 there.
     */
    private static final List<FileFlag> SLOT_FLAGS = List.of(FileFlag.SYNC, FileFlag.IMMUTABLE, FileFlag.APPEND,
            FileFlag.NO_DUMP, FileFlag.NO_ATIME, FileFlag.DAX);
    /** Every bit a slot's flags byte may have. */
    private static final int KNOWN_FLAGS = FLAG_EXTENT_LIST | ((1 << SLOT_FLAGS.size()) - 1) << 1;

    private InodeCodec() {
    }

    /**
     * @param flags inode flags, each of {@link #SLOT_FLAGS}
     * @return their bits in a slot's flags byte
     */
    static int slotBits(Set<FileFlag> flags) {
        int bits = 0;
        for (FileFlag flag : flags) {
            int index = SLOT_FLAGS.indexOf(flag);
            if (index < 0) {
                throw new IllegalArgumentException("xfs-like keeps no " + flag + " flag");
            }
            bits |= 1 << (index + 1);
        }
        return bits;
    }

    /**
     * @param bits a slot's flags byte
     * @return the inode flags in it
     */
    static Set<FileFlag> inodeFlags(int bits) {
        Set<FileFlag> flags = EnumSet.noneOf(FileFlag.class);
        for (int i = 0; i < SLOT_FLAGS.size(); i++) {
            if ((bits & 1 << (i + 1)) != 0) {
                flags.add(SLOT_FLAGS.get(i));
            }
        }
        return flags;
    }

    /** @return whether xfs-like keeps the flag */
    static boolean keeps(FileFlag flag) {
        return SLOT_FLAGS.contains(flag);
    }

    /**
     * One decoded inode slot.
     *
     * @param ino the inode number stored in it
     * @param typeCode 0 free, else {@link FileTypeCodes}' code
     * @param flags {@link #FLAG_EXTENT_LIST} and the inode flags ({@link #inodeFlags})
     * @param mode permission bits
     * @param nlink names
     * @param size the on-disk size (a symbolic link: its target's length)
     * @param parent the parent directory (directories), else 0
     * @param dataCount data-fork extents
     * @param cowCount COW-fork extents
     * @param listHead the first extent-list block, 0 if none
     * @param uid owner
     * @param gid group
     * @param times atime, mtime, ctime, btime
     * @param xattrHead the first extended-attribute block, 0 if none
     * @param targetHead the first symlink block, 0 if none
     * @param inline the extents stored in the slot (data fork first), if not in a list
     * @param inlineTarget a symbolic link's target stored in the slot, else null
     * @param rdev a device node's number, else 0
     */
    record Slot(long ino, int typeCode, int flags, int mode, int nlink, long size, long parent, int dataCount,
            int cowCount, long listHead, int uid, int gid, List<Instant> times, long xattrHead, long targetHead,
            List<Extent> inline, byte[] inlineTarget, long rdev) {
    }

    /**
     * One decoded extent-list block.
     *
     * @param owner the inode it belongs to
     * @param next the next block of the list, 0 at the end
     * @param extents the extents in it
     */
    record ListBlock(long owner, long next, List<Extent> extents) {
    }

    /**
     * One decoded inode table block.
     *
     * @param initialisedBlocks block 0 only: table blocks {@code [0, initialisedBlocks)} are written,
     *     the others never read (their slots are free); 0 in every other block
     * @param slots its slots, free ones included
     */
    record TableBlock(long initialisedBlocks, List<Slot> slots) {
    }

    /**
     * @param geometry the geometry
     * @param tableIndex which table block (0 for the first)
     * @param initialisedBlocks table blocks written so far, this one included: stored in block 0 only
     * @param states the in-memory inode by number, null for a free slot
     * @return the payload of the table block
     */
    static ByteBuffer encodeTableBlock(XfsGeometry geometry, long tableIndex, long initialisedBlocks,
            LongFunction<InodeState> states) {
        if (tableIndex >= initialisedBlocks || initialisedBlocks > geometry.inodeTableBlocks()) {
            throw new IllegalArgumentException("inode table block " + tableIndex + " is not among the "
                    + initialisedBlocks + " initialised of " + geometry.inodeTableBlocks());
        }
        int perBlock = geometry.inodesPerBlock();
        long first = tableIndex * perBlock;
        BlockWriter writer = BlockWriter.allocate(XfsLayout.INODE_TABLE_HEADER + perBlock * XfsLayout.INODE_BYTES,
                "xfs-like inode table block");
        try {
            writer.putLong(first).putInt(perBlock).putInt(tableIndex == 0 ? Math.toIntExact(initialisedBlocks) : 0);
            for (int slot = 0; slot < perBlock; slot++) {
                InodeState state = states.apply(first + slot);
                writer.putBytes(state == null ? new byte[XfsLayout.INODE_BYTES] : lockedSlot(state));
            }
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("inode table block overflowed", e);
        }
        return writer.written();
    }

    private static byte[] lockedSlot(InodeState state) throws InvalidRangeException {
        state.lock.lock();
        try {
            return encodeSlot(state);
        } finally {
            state.lock.unlock();
        }
    }

    private static byte[] encodeSlot(InodeState state) throws InvalidRangeException {
        List<Extent> data = state.persistedData();
        List<Extent> cow = state.persistedCow();
        boolean inList = !state.listBlocks.isEmpty();
        BlockWriter writer = BlockWriter.allocate(XfsLayout.INODE_BYTES, "xfs-like inode " + state.ino);
        writer.putByte(FileTypeCodes.code(state.type)).putByte((inList ? FLAG_EXTENT_LIST : 0) | state.fileFlags)
                .putByte(state.mode & 0xFF).putByte(state.mode >>> 8)
                .putInt(state.nlink)
                .putLong(state.ino)
                .putLong(state.diskSize)
                .putLong(state.parent)
                .putInt(data.size()).putInt(cow.size())
                .putLong(inList ? state.listBlocks.getFirst() : 0)
                .putInt(state.uid).putInt(state.gid);
        for (Instant time : List.of(state.atime, state.mtime, state.ctime, state.btime)) {
            writer.putLong(time.getEpochSecond()).putInt(time.getNano());
        }
        writer.putLong(state.xattrBlocks.isEmpty() ? 0 : state.xattrBlocks.getFirst())
                .putLong(state.targetBlocks.isEmpty() ? 0 : state.targetBlocks.getFirst())
                .putLong(state.rdev);
        if (state.target != null && state.targetBlocks.isEmpty()) {
            writer.putBytes(state.target);
        } else if (!inList) {
            for (Extent extent : data) {
                XfsLayout.putExtent(writer, extent);
            }
            for (Extent extent : cow) {
                XfsLayout.putExtent(writer, extent);
            }
        }
        byte[] slot = new byte[XfsLayout.INODE_BYTES];
        byte[] written = writer.toByteArray();
        System.arraycopy(written, 0, slot, 0, written.length);
        return slot;
    }

    /**
     * @param block a verified inode table block
     * @param geometry the geometry
     * @param tableIndex which table block it is
     * @return its slots, free ones included, and (block 0) the count of initialised table blocks
     * @throws CorruptFileSystemException if a slot does not decode, or the count is out of range
     */
    static TableBlock decodeTableBlock(MetadataBlock block, XfsGeometry geometry, long tableIndex)
            throws CorruptFileSystemException {
        BlockReader reader = block.reader();
        int perBlock = geometry.inodesPerBlock();
        long first = reader.getLong();
        int slots = reader.getInt();
        long initialised = Integer.toUnsignedLong(reader.getInt());
        if (first != tableIndex * perBlock || slots != perBlock) {
            throw reader.corrupt("inode table block claims inodes " + first + "+" + slots + ", expected "
                    + tableIndex * perBlock + "+" + perBlock);
        }
        if (tableIndex == 0 ? initialised < 1 || initialised > geometry.inodeTableBlocks() : initialised != 0) {
            throw reader.corrupt("inode table block " + tableIndex + " says " + initialised
                    + " table blocks are initialised; expected " + (tableIndex == 0
                            ? "1 to " + geometry.inodeTableBlocks() : "0 (only block 0 counts them)"));
        }
        List<Slot> result = new ArrayList<>(perBlock);
        for (int i = 0; i < perBlock; i++) {
            result.add(decodeSlot(reader, first + i));
        }
        return new TableBlock(initialised, result);
    }

    private static Slot decodeSlot(BlockReader reader, long expectedIno) throws CorruptFileSystemException {
        int start = reader.position();
        int typeCode = reader.getByte();
        int flags = reader.getByte();
        int mode = reader.getByte() | reader.getByte() << 8;
        int nlink = reader.getInt();
        long ino = reader.getLong();
        long size = reader.getLong();
        long parent = reader.getLong();
        int dataCount = reader.getInt();
        int cowCount = reader.getInt();
        long listHead = reader.getLong();
        int uid = reader.getInt();
        int gid = reader.getInt();
        long[] seconds = new long[4];
        int[] nanos = new int[4];
        for (int i = 0; i < 4; i++) {
            seconds[i] = reader.getLong();
            nanos[i] = reader.getInt();
        }
        long xattrHead = reader.getLong();
        long targetHead = reader.getLong();
        long rdev = reader.getLong();
        List<Extent> inline = new ArrayList<>();
        Instant[] times = {Instant.EPOCH, Instant.EPOCH, Instant.EPOCH, Instant.EPOCH};
        byte[] inlineTarget = null;
        if (typeCode != XfsLayout.TYPE_FREE) {
            FileType type = FileTypeCodes.typeOf(typeCode);
            if (ino != expectedIno || type == null || (flags & ~KNOWN_FLAGS) != 0 || nlink < 0 || size < 0
                    || dataCount < 0 || cowCount < 0 || (mode & ~NewInodeAttributes.MODE_MASK) != 0
                    || (rdev != 0 && !type.isDevice())) {
                throw reader.corrupt("inode slot " + expectedIno + " is damaged (ino " + ino + ", type "
                        + typeCode + ", flags " + flags + ", mode 0" + Integer.toOctalString(mode) + ", nlink "
                        + nlink + ", size " + size + ", device number " + rdev + ")");
            }
            for (int i = 0; i < 4; i++) {
                times[i] = time(reader, ino, i, seconds[i], nanos[i]);
            }
            boolean inList = (flags & FLAG_EXTENT_LIST) != 0;
            if (!inList && dataCount + cowCount > XfsLayout.INLINE_EXTENTS) {
                throw reader.corrupt("inode " + ino + " claims " + (dataCount + cowCount) + " inline extents");
            }
            if (inList == (listHead == 0)) {
                throw reader.corrupt("inode " + ino + " has extent-list flag " + inList + " and head " + listHead);
            }
            if (type.isSpecial() && (size != 0 || inList || dataCount + cowCount > 0)) {
                throw reader.corrupt("inode " + ino + " is a " + type + " with size " + size + " and "
                        + (dataCount + cowCount) + " extents (a special file has no data)");
            }
            if (type == FileType.SYMLINK) {
                inlineTarget = symlinkTarget(reader, ino, size, inList || dataCount + cowCount > 0, targetHead, mode);
            } else {
                if (targetHead != 0) {
                    throw reader.corrupt("inode " + ino + " is a " + type + " with symlink block " + targetHead);
                }
                if (!inList) {
                    for (int i = 0; i < dataCount + cowCount; i++) {
                        inline.add(XfsLayout.getExtent(reader));
                    }
                }
            }
        }
        reader.skip(XfsLayout.INODE_BYTES - (reader.position() - start));
        return new Slot(ino, typeCode, flags, mode, nlink, size, parent, dataCount, cowCount, listHead, uid, gid,
                List.of(times), xattrHead, targetHead, inline, inlineTarget, rdev);
    }

    private static Instant time(BlockReader reader, long ino, int which, long seconds, int nanos)
            throws CorruptFileSystemException {
        String[] names = {"atime", "mtime", "ctime", "btime"};
        if (nanos < 0 || nanos > 999_999_999) {
            throw reader.corrupt("inode " + ino + " " + names[which] + " has " + nanos + " nanoseconds");
        }
        try {
            return Instant.ofEpochSecond(seconds, nanos);
        } catch (DateTimeException e) {
            throw reader.corrupt("inode " + ino + " " + names[which] + " of " + seconds + " s is out of range");
        }
    }

    /** @return the inline target of a symbolic link's slot, or null if it is in symlink blocks */
    private static byte[] symlinkTarget(BlockReader reader, long ino, long size, boolean hasExtents, long targetHead,
            int mode) throws CorruptFileSystemException {
        if (size < 1 || size > FileNames.MAX_TARGET_BYTES || hasExtents || mode != 0777
                || (size <= XfsLayout.INLINE_TARGET_BYTES) != (targetHead == 0)) {
            throw reader.corrupt("symbolic link inode " + ino + " of " + size + " bytes, mode 0"
                    + Integer.toOctalString(mode) + ", has extents " + hasExtents + ", symlink block " + targetHead
                    + " (a target of up to " + XfsLayout.INLINE_TARGET_BYTES + " bytes is in the slot)");
        }
        if (targetHead != 0) {
            return null;
        }
        byte[] target = reader.getBytes((int) size);
        checkTarget(target, "symbolic link inode " + ino);
        return target;
    }

    /** @throws CorruptFileSystemException if a target holds a NUL */
    static void checkTarget(byte[] target, String where) throws CorruptFileSystemException {
        for (byte b : target) {
            if (b == 0) {
                throw new CorruptFileSystemException(where + ": its target holds a NUL byte");
            }
        }
    }

    static ByteBuffer encodeListBlock(long owner, long next, List<Extent> extents) {
        BlockWriter writer = BlockWriter.allocate(XfsLayout.EXTENT_LIST_HEADER + extents.size() * XfsLayout.EXTENT_BYTES,
                "xfs-like extent list");
        try {
            writer.putLong(owner).putLong(next).putInt(extents.size()).putInt(0);
            for (Extent extent : extents) {
                XfsLayout.putExtent(writer, extent);
            }
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("extent list block overflowed", e);
        }
        return writer.written();
    }

    static ListBlock decodeListBlock(MetadataBlock block, int capacity) throws CorruptFileSystemException {
        BlockReader reader = block.reader();
        long owner = reader.getLong();
        long next = reader.getLong();
        int count = reader.getInt();
        reader.getInt();
        if (count < 1 || count > capacity) {
            throw reader.corrupt("extent list block holds " + count + " extents, at most " + capacity);
        }
        List<Extent> extents = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            extents.add(XfsLayout.getExtent(reader));
        }
        return new ListBlock(owner, next, extents);
    }
}
