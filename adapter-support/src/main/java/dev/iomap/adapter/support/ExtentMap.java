package dev.iomap.adapter.support;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The extents of one file (or one fork of it): a sorted map from file block to {@link Extent}, the
 * in-memory form of an XFS extent list or a bcachefs extents B-tree leaf.
 *
 * <p><b>Invariants</b>, kept by every method and verified by {@link #checkInvariants()} and
 * {@link #decode}: extents do not overlap; no two neighbours could be merged (an insert merges with
 * neighbours that continue it in the file and on the device with the same state and sharing, so the
 * map is canonical: two maps with the same block-by-block content are equal). File blocks live in
 * {@code [0, }{@link #END}{@code )}; all arithmetic is 64-bit, so offsets beyond 2^32 blocks work.
 *
 * <p><b>Errors.</b> A range that is negative, empty where it must not be, or overflows gets
 * {@link InvalidRangeException}; so does an insert over an existing extent, naming both. Bytes that
 * do not decode get {@link CorruptFileSystemException}.
 *
 * <p><b>Encoding</b> (little-endian): an int extent count N, then N records of 28 bytes in file
 * order: file block (8), length (8), device block (8, -1 for delalloc), flags (4: bits 0-1 the
 * state, 0 written, 1 unwritten, 2 delalloc; bit 2 shared; other bits zero). Adapters normally
 * persist no delalloc extents (they are in-memory reservations) but the encoding allows them.
 *
 * <p><b>Not thread-safe</b>: guard each map with the lock of the inode it belongs to.
 */
public final class ExtentMap {
    /** The first file block past the address space; no extent reaches beyond it. */
    public static final long END = Long.MAX_VALUE;
    /** Bytes of one encoded extent. */
    public static final int ENCODED_EXTENT_BYTES = 28;

    private static final int SHARED_FLAG = 1 << 2;
    private static final int STATE_MASK = 0b11;

    private final TreeMap<Long, Extent> extents = new TreeMap<>();
    private long mappedBlocks;

    /** Creates an empty map: the whole file is one hole. */
    public ExtentMap() {
    }

    /**
     * @param fileBlock a file block in {@code [0, END)}
     * @return the extent containing it, whole (it may start before {@code fileBlock}), or else the
     *     hole containing it, whole: from the end of the previous extent (or 0) to the start of the
     *     next (or {@link #END})
     * @throws InvalidRangeException if {@code fileBlock} is negative or not below {@link #END}
     */
    public BlockMapping lookup(long fileBlock) throws InvalidRangeException {
        if (fileBlock < 0 || fileBlock >= END) {
            throw new InvalidRangeException("extent lookup: file block " + fileBlock + " is outside [0, "
                    + END + ")");
        }
        Map.Entry<Long, Extent> before = extents.floorEntry(fileBlock);
        if (before != null && before.getValue().contains(fileBlock)) {
            return before.getValue();
        }
        long holeStart = before == null ? 0 : before.getValue().endBlock();
        Long next = extents.higherKey(fileBlock);
        return new Hole(holeStart, (next == null ? END : next) - holeStart);
    }

    /**
     * Adds an extent over blocks that are holes, merging it with neighbours it continues.
     *
     * @param extent the new extent
     * @throws InvalidRangeException if it overlaps an extent already there (naming both); the map is
     *     unchanged then
     */
    public void insert(Extent extent) throws InvalidRangeException {
        Extent overlapping = firstOverlap(extent.fileBlock(), extent.endBlock());
        if (overlapping != null) {
            throw new InvalidRangeException("extent map: cannot insert " + extent + ": it overlaps "
                    + overlapping);
        }
        Extent merged = extent;
        Map.Entry<Long, Extent> before = extents.lowerEntry(extent.fileBlock());
        if (before != null && before.getValue().canMergeWith(merged)) {
            Extent previous = before.getValue();
            remove(previous);
            merged = new Extent(previous.fileBlock(), previous.length() + merged.length(),
                    previous.deviceBlock(), previous.state(), previous.shared());
        }
        Extent after = extents.get(extent.endBlock());
        if (after != null && merged.canMergeWith(after)) {
            remove(after);
            merged = new Extent(merged.fileBlock(), merged.length() + after.length(),
                    merged.deviceBlock(), merged.state(), merged.shared());
        }
        add(merged);
    }

    /**
     * Removes every mapping in {@code [fileBlock, fileBlock + length)}, splitting extents that cross
     * its edges: the kernel's punch hole, and what truncate does to the blocks past EOF.
     *
     * @param fileBlock the first file block
     * @param length blocks, at least 0
     * @return the pieces removed, in file order, clipped to the range: their device blocks are the
     *     ones to free
     * @throws InvalidRangeException if the range is negative or overflows
     */
    public List<Extent> punch(long fileBlock, long length) throws InvalidRangeException {
        long end = checkedEnd("punch", fileBlock, length);
        List<Extent> removed = new ArrayList<>();
        for (Extent extent : overlapping(fileBlock, end)) {
            remove(extent);
            long from = Math.max(fileBlock, extent.fileBlock());
            long to = Math.min(end, extent.endBlock());
            removed.add(extent.slice(from, to));
            if (extent.fileBlock() < from) {
                add(extent.slice(extent.fileBlock(), from));
            }
            if (to < extent.endBlock()) {
                add(extent.slice(to, extent.endBlock()));
            }
        }
        return removed;
    }

    /**
     * Maps {@code extent}'s blocks to it whatever they were mapped to before: a punch of its range,
     * then an insert. How unwritten extents become written and delalloc gets real blocks.
     *
     * @param extent the new mapping
     * @return what the range was mapped to before, as {@link #punch} returns it
     */
    public List<Extent> replace(Extent extent) {
        try {
            List<Extent> removed = punch(extent.fileBlock(), extent.length());
            insert(extent);
            return removed;
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("an extent's own range was refused", e);
        }
    }

    /**
     * @param fileBlock the first file block
     * @param length blocks, at least 0
     * @return the extents overlapping {@code [fileBlock, fileBlock + length)}, clipped to it, in order
     * @throws InvalidRangeException if the range is negative or overflows
     */
    public List<Extent> extents(long fileBlock, long length) throws InvalidRangeException {
        long end = checkedEnd("extents", fileBlock, length);
        List<Extent> clipped = new ArrayList<>();
        for (Extent extent : overlapping(fileBlock, end)) {
            clipped.add(extent.slice(Math.max(fileBlock, extent.fileBlock()), Math.min(end, extent.endBlock())));
        }
        return clipped;
    }

    /**
     * @param fileBlock the first file block
     * @param length blocks, at least 0
     * @return extents and holes covering exactly {@code [fileBlock, fileBlock + length)}, clipped to
     *     it, in order: what a FIEMAP-style report or an iomap iteration walks
     * @throws InvalidRangeException if the range is negative or overflows
     */
    public List<BlockMapping> mappings(long fileBlock, long length) throws InvalidRangeException {
        long end = checkedEnd("mappings", fileBlock, length);
        List<BlockMapping> result = new ArrayList<>();
        long next = fileBlock;
        for (Extent extent : extents(fileBlock, length)) {
            if (extent.fileBlock() > next) {
                result.add(new Hole(next, extent.fileBlock() - next));
            }
            result.add(extent);
            next = extent.endBlock();
        }
        if (next < end) {
            result.add(new Hole(next, end - next));
        }
        return result;
    }

    /** @return every extent, in file order */
    public List<Extent> extents() {
        return List.copyOf(extents.values());
    }

    /** @return the number of extents */
    public int size() {
        return extents.size();
    }

    /** @return whether there are no extents */
    public boolean isEmpty() {
        return extents.isEmpty();
    }

    /** @return file blocks covered by extents, delalloc included */
    public long mappedBlocks() {
        return mappedBlocks;
    }

    /** @return the first file block after the last extent, 0 if there is none */
    public long endBlock() {
        return extents.isEmpty() ? 0 : extents.lastEntry().getValue().endBlock();
    }

    /** @return bytes {@link #encode()} produces */
    public int encodedSize() {
        return Integer.BYTES + extents.size() * ENCODED_EXTENT_BYTES;
    }

    /** @return the encoding described in the class comment */
    public byte[] encode() {
        BlockWriter writer = BlockWriter.allocate(encodedSize(), "extent map");
        try {
            encode(writer);
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("encodedSize() is wrong", e);
        }
        return writer.toByteArray();
    }

    /**
     * Appends the encoding to a writer, e.g. inside an inode's payload.
     *
     * @param writer where it goes
     * @throws InvalidRangeException if it does not fit (see {@link #encodedSize()})
     */
    public void encode(BlockWriter writer) throws InvalidRangeException {
        if (writer.remaining() < encodedSize()) {
            throw new InvalidRangeException("extent map of " + extents.size() + " extents needs "
                    + encodedSize() + " bytes, " + writer.remaining() + " left");
        }
        writer.putInt(extents.size());
        for (Extent extent : extents.values()) {
            int flags = extent.state().code() | (extent.shared() ? SHARED_FLAG : 0);
            writer.putLong(extent.fileBlock()).putLong(extent.length())
                    .putLong(extent.deviceBlock()).putInt(flags);
        }
    }

    /**
     * @param bytes an encoding, between position and limit (extra bytes after it are ignored)
     * @param what the structure and where it was read, for messages
     * @return the map
     * @throws CorruptFileSystemException if the bytes are truncated or describe invalid, unsorted or
     *     overlapping extents
     */
    public static ExtentMap decode(ByteBuffer bytes, String what) throws CorruptFileSystemException {
        return decode(new BlockReader(bytes, what));
    }

    /**
     * Reads an encoding from a reader, leaving it after the last extent. Neighbours that could be
     * merged are merged.
     *
     * @param reader the source
     * @return the map
     * @throws CorruptFileSystemException as {@link #decode(ByteBuffer, String)}
     */
    public static ExtentMap decode(BlockReader reader) throws CorruptFileSystemException {
        int count = reader.getInt();
        if (count < 0 || (long) count * ENCODED_EXTENT_BYTES > reader.remaining()) {
            throw reader.corrupt("extent count " + count + " does not fit in " + reader.remaining() + " bytes");
        }
        ExtentMap map = new ExtentMap();
        long previousEnd = 0;
        for (int i = 0; i < count; i++) {
            Extent extent = decodeExtent(reader, i);
            if (extent.fileBlock() < previousEnd) {
                throw reader.corrupt("extent " + i + " " + extent + " starts before the end " + previousEnd
                        + " of the extent before it");
            }
            previousEnd = extent.endBlock();
            try {
                map.insert(extent);
            } catch (InvalidRangeException e) {
                throw reader.corrupt(e.getMessage());
            }
        }
        return map;
    }

    private static Extent decodeExtent(BlockReader reader, int index) throws CorruptFileSystemException {
        long fileBlock = reader.getLong();
        long length = reader.getLong();
        long deviceBlock = reader.getLong();
        int flags = reader.getInt();
        ExtentState state = ExtentState.ofCode(flags & STATE_MASK);
        if (state == null || (flags & ~(STATE_MASK | SHARED_FLAG)) != 0) {
            throw reader.corrupt("extent " + index + " has bad flags " + SuperblockCodec.hex(flags));
        }
        try {
            return new Extent(fileBlock, length, deviceBlock, state, (flags & SHARED_FLAG) != 0);
        } catch (IllegalArgumentException e) {
            throw reader.corrupt("extent " + index + ": " + e.getMessage());
        }
    }

    /**
     * Verifies the invariants in the class comment (for fsck, and for tests after every change).
     *
     * @throws CorruptFileSystemException naming the first two extents that break them
     */
    public void checkInvariants() throws CorruptFileSystemException {
        Extent previous = null;
        long blocks = 0;
        for (var entry : extents.entrySet()) {
            Extent extent = entry.getValue();
            if (entry.getKey() != extent.fileBlock()) {
                throw new CorruptFileSystemException("extent map: " + extent + " is filed under block "
                        + entry.getKey());
            }
            if (previous != null && extent.fileBlock() < previous.endBlock()) {
                throw new CorruptFileSystemException("extent map: " + previous + " overlaps " + extent);
            }
            if (previous != null && previous.canMergeWith(extent)) {
                throw new CorruptFileSystemException("extent map: " + previous + " and " + extent
                        + " should have been merged");
            }
            blocks += extent.length();
            previous = extent;
        }
        if (blocks != mappedBlocks) {
            throw new CorruptFileSystemException("extent map: extents cover " + blocks
                    + " blocks but the count says " + mappedBlocks);
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ExtentMap that && extents.equals(that.extents);
    }

    @Override
    public int hashCode() {
        return extents.hashCode();
    }

    @Override
    public String toString() {
        return "ExtentMap" + extents.values();
    }

    /** @return the extents overlapping {@code [from, to)}, in order (a copy: safe to modify the map) */
    private List<Extent> overlapping(long from, long to) {
        List<Extent> result = new ArrayList<>();
        if (from >= to) {
            return result;
        }
        Map.Entry<Long, Extent> before = extents.lowerEntry(from);
        if (before != null && before.getValue().endBlock() > from) {
            result.add(before.getValue());
        }
        result.addAll(extents.subMap(from, true, to, false).values());
        return result;
    }

    private Extent firstOverlap(long from, long to) {
        List<Extent> found = overlapping(from, to);
        return found.isEmpty() ? null : found.getFirst();
    }

    private void add(Extent extent) {
        extents.put(extent.fileBlock(), extent);
        mappedBlocks += extent.length();
    }

    private void remove(Extent extent) {
        extents.remove(extent.fileBlock());
        mappedBlocks -= extent.length();
    }

    private static long checkedEnd(String what, long fileBlock, long length) throws InvalidRangeException {
        InvalidRangeException.checkRange("extent map " + what, fileBlock, length, END);
        return fileBlock + length;
    }
}
