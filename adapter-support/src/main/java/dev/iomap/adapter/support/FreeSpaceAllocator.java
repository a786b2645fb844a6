package dev.iomap.adapter.support;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NoSpaceException;
import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The free space of one block range (a whole device, or one allocation group or resource group), as
 * free extents indexed twice, like XFS's by-block and by-size free-space B-trees: by start block (for
 * allocations near a block and for coalescing) and by length then start (for best fit).
 *
 * <p><b>Invariants</b> (verified by {@link #checkConsistent()}): free extents lie inside
 * {@code [firstBlock, firstBlock + blockCount)}, neither overlap nor touch (a free always coalesces
 * with its neighbours), both indexes hold the same extents, and {@link #freeBlocks()} is their sum.
 *
 * <p><b>Allocation policy</b> ({@link #allocate(long, long, long)}): with a {@code nearBlock} hint,
 * the free extents around it (up to {@value #NEAR_SEARCH_LIMIT} each way) that can hold all
 * {@code wantBlocks} are tried and the placement closest to the hint wins: at the hint itself if it
 * is free with room after it, else the end of an extent before the hint or the start of one after.
 * Otherwise the smallest extent that holds {@code wantBlocks} (best fit, lowest start on ties).
 * Otherwise the largest extent, if it holds at least {@code minBlocks}: the result is then shorter
 * than wanted. Otherwise {@link NoSpaceException}. Deterministic: the same sequence of calls gives the
 * same results.
 *
 * <p><b>Errors.</b> Ranges outside the allocator's blocks, empty or negative ones, and
 * {@code minBlocks > wantBlocks} get {@link InvalidRangeException}; a free of blocks already free
 * (double free) gets {@link CorruptFileSystemException} naming both ranges; nothing changes then.
 *
 * <p><b>Encoding</b> (little-endian): first block (8), block count (8), free extent count N (4), then
 * N pairs of start (8) and length (8) in block order.
 *
 * <p><b>Thread-safe</b>: every method is atomic (the allocator is shared by all the files of its
 * range, so it locks itself).
 */
public final class FreeSpaceAllocator {
    /** How many free extents each way from the hint a near allocation looks at. */
    public static final int NEAR_SEARCH_LIMIT = 64;

    private static final Comparator<BlockRange> BY_LENGTH =
            Comparator.comparingLong(BlockRange::length).thenComparingLong(BlockRange::start);
    private static final int ENCODED_HEADER_BYTES = 20;
    private static final int ENCODED_EXTENT_BYTES = 16;

    private final long firstBlock;
    private final long blockCount;
    private final TreeMap<Long, BlockRange> byStart = new TreeMap<>();
    private final TreeSet<BlockRange> byLength = new TreeSet<>(BY_LENGTH);
    private long freeBlocks;

    private FreeSpaceAllocator(long firstBlock, long blockCount) {
        if (firstBlock < 0 || blockCount < 1 || firstBlock > Long.MAX_VALUE - blockCount) {
            throw new IllegalArgumentException("allocator range [" + firstBlock + ", +" + blockCount
                    + ") is negative, empty or overflows");
        }
        this.firstBlock = firstBlock;
        this.blockCount = blockCount;
    }

    /**
     * @param firstBlock the first block managed, at least 0
     * @param blockCount blocks managed, at least 1
     * @return an allocator with every block free (mkfs)
     * @throws IllegalArgumentException if the range is negative, empty or overflows
     */
    public static FreeSpaceAllocator allFree(long firstBlock, long blockCount) {
        FreeSpaceAllocator allocator = allAllocated(firstBlock, blockCount);
        allocator.add(new BlockRange(firstBlock, blockCount));
        return allocator;
    }

    /**
     * @param firstBlock the first block managed, at least 0
     * @param blockCount blocks managed, at least 1
     * @return an allocator with no block free (to be filled with {@link #free}, e.g. from a bitmap)
     * @throws IllegalArgumentException if the range is negative, empty or overflows
     */
    public static FreeSpaceAllocator allAllocated(long firstBlock, long blockCount) {
        return new FreeSpaceAllocator(firstBlock, blockCount);
    }

    /**
     * Allocates up to {@code wantBlocks} contiguous blocks, at least {@code minBlocks}, by the policy
     * in the class comment.
     *
     * @param wantBlocks blocks wanted, at least {@code minBlocks}
     * @param nearBlock where the caller would like them to start (e.g. the block after the file's
     *     previous extent); any negative value for no preference; a hint, never an error
     * @param minBlocks the fewest blocks that are of use, at least 1
     * @return the blocks allocated: {@code minBlocks <= length <= wantBlocks}
     * @throws NoSpaceException if no free extent holds {@code minBlocks} (nothing is allocated)
     * @throws InvalidRangeException if {@code minBlocks < 1} or {@code wantBlocks < minBlocks}
     */
    public synchronized BlockRange allocate(long wantBlocks, long nearBlock, long minBlocks)
            throws NoSpaceException, InvalidRangeException {
        if (minBlocks < 1 || wantBlocks < minBlocks) {
            throw new InvalidRangeException("allocate: want " + wantBlocks + " blocks, at least " + minBlocks
                    + ": need 1 <= minBlocks <= wantBlocks");
        }
        BlockRange chosen = nearBlock >= 0 ? nearFit(wantBlocks, nearBlock) : null;
        if (chosen == null) {
            BlockRange best = byLength.ceiling(new BlockRange(0, wantBlocks));
            if (best != null) {
                chosen = new BlockRange(best.start(), wantBlocks);
            }
        }
        if (chosen == null) {
            BlockRange largest = byLength.isEmpty() ? null : byLength.last();
            if (largest == null || largest.length() < minBlocks) {
                throw new NoSpaceException("cannot allocate " + minBlocks + " contiguous blocks in "
                        + this + ": the largest free extent is " + (largest == null ? 0 : largest.length())
                        + " blocks, " + freeBlocks + " free in all");
            }
            chosen = largest;
        }
        take(chosen);
        return chosen;
    }

    /**
     * Allocates exactly {@code [start, start + length)} (mkfs reserving its metadata, a filesystem
     * replaying a bitmap, a zone written at its pointer).
     *
     * @param start the first block
     * @param length blocks, at least 1
     * @throws NoSpaceException if some of them are not free (naming the first that is not)
     * @throws InvalidRangeException if the range is empty or not inside the allocator's blocks
     */
    public synchronized void allocateExact(long start, long length)
            throws NoSpaceException, InvalidRangeException {
        BlockRange wanted = checkInside("allocateExact", start, length);
        Map.Entry<Long, BlockRange> holder = byStart.floorEntry(start);
        if (holder == null || holder.getValue().end() < wanted.end() || !holder.getValue().contains(start)) {
            long firstUsed = holder != null && holder.getValue().contains(start) ? holder.getValue().end() : start;
            throw new NoSpaceException("allocateExact: blocks " + wanted + " are not all free in " + this
                    + ": block " + firstUsed + " is in use");
        }
        take(wanted);
    }

    /**
     * Returns blocks to the free space, coalescing them with free neighbours.
     *
     * @param start the first block
     * @param length blocks, at least 1
     * @throws CorruptFileSystemException if some of them are already free (a double free: the
     *     filesystem's metadata disagrees with itself); nothing changes then
     * @throws InvalidRangeException if the range is empty or not inside the allocator's blocks
     */
    public synchronized void free(long start, long length)
            throws CorruptFileSystemException, InvalidRangeException {
        BlockRange freed = checkInside("free", start, length);
        Optional<BlockRange> overlap = firstFreeOverlap(freed);
        if (overlap.isPresent()) {
            throw new CorruptFileSystemException("double free in " + this + ": freeing blocks " + freed
                    + " but free extent " + overlap.get() + " overlaps them");
        }
        long mergedStart = start;
        long mergedEnd = freed.end();
        Map.Entry<Long, BlockRange> before = byStart.lowerEntry(start);
        if (before != null && before.getValue().end() == start) {
            remove(before.getValue());
            mergedStart = before.getValue().start();
        }
        BlockRange after = byStart.get(mergedEnd);
        if (after != null) {
            remove(after);
            mergedEnd = after.end();
        }
        add(new BlockRange(mergedStart, mergedEnd - mergedStart));
    }

    /**
     * @param start the first block
     * @param length blocks, at least 1
     * @return whether every block of the range is free
     * @throws InvalidRangeException if the range is empty or not inside the allocator's blocks
     */
    public synchronized boolean isFree(long start, long length) throws InvalidRangeException {
        BlockRange range = checkInside("isFree", start, length);
        Map.Entry<Long, BlockRange> holder = byStart.floorEntry(start);
        return holder != null && holder.getValue().end() >= range.end();
    }

    /**
     * For fsck: whether blocks a file claims are also free.
     *
     * @param range blocks in use
     * @return the first free extent overlapping them, if any
     */
    public synchronized Optional<BlockRange> firstFreeOverlap(BlockRange range) {
        Map.Entry<Long, BlockRange> before = byStart.floorEntry(range.start());
        if (before != null && before.getValue().overlaps(range)) {
            return Optional.of(before.getValue());
        }
        Map.Entry<Long, BlockRange> after = byStart.higherEntry(range.start());
        if (after != null && after.getValue().overlaps(range)) {
            return Optional.of(after.getValue());
        }
        return Optional.empty();
    }

    /** @return free blocks */
    public synchronized long freeBlocks() {
        return freeBlocks;
    }

    /** @return the number of free extents (a measure of fragmentation) */
    public synchronized int freeExtentCount() {
        return byStart.size();
    }

    /** @return the length of the largest free extent, 0 if none */
    public synchronized long largestFreeExtent() {
        return byLength.isEmpty() ? 0 : byLength.last().length();
    }

    /** @return the free extents in block order */
    public synchronized List<BlockRange> freeExtents() {
        return List.copyOf(byStart.values());
    }

    /** @return the first block managed */
    public long firstBlock() {
        return firstBlock;
    }

    /** @return blocks managed */
    public long blockCount() {
        return blockCount;
    }

    /** @return bytes {@link #encode()} produces now */
    public synchronized int encodedSize() {
        return Math.toIntExact(ENCODED_HEADER_BYTES + (long) byStart.size() * ENCODED_EXTENT_BYTES);
    }

    /** @return the encoding described in the class comment */
    public synchronized byte[] encode() {
        BlockWriter writer = BlockWriter.allocate(encodedSize(), "free space");
        try {
            encode(writer);
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("encodedSize() is wrong", e);
        }
        return writer.toByteArray();
    }

    /**
     * Appends the encoding to a writer.
     *
     * @param writer where it goes
     * @throws InvalidRangeException if it does not fit (see {@link #encodedSize()}); nothing is
     *     written then
     */
    public synchronized void encode(BlockWriter writer) throws InvalidRangeException {
        if (writer.remaining() < encodedSize()) {
            throw new InvalidRangeException("free space of " + byStart.size() + " extents needs "
                    + encodedSize() + " bytes, " + writer.remaining() + " left");
        }
        writer.putLong(firstBlock).putLong(blockCount).putInt(byStart.size());
        for (BlockRange range : byStart.values()) {
            writer.putLong(range.start()).putLong(range.length());
        }
    }

    /**
     * @param bytes an encoding, between position and limit (extra bytes after it are ignored)
     * @param what the structure and where it was read, for messages
     * @return the allocator
     * @throws CorruptFileSystemException if the bytes are truncated or the extents are outside the
     *     range, unsorted, overlapping or touching
     */
    public static FreeSpaceAllocator decode(ByteBuffer bytes, String what) throws CorruptFileSystemException {
        return decode(new BlockReader(bytes, what));
    }

    /**
     * Reads an encoding from a reader, leaving it after the last extent.
     *
     * @param reader the source
     * @return the allocator
     * @throws CorruptFileSystemException as {@link #decode(ByteBuffer, String)}
     */
    public static FreeSpaceAllocator decode(BlockReader reader) throws CorruptFileSystemException {
        long first = reader.getLong();
        long count = reader.getLong();
        int extents = reader.getInt();
        if (first < 0 || count < 1 || first > Long.MAX_VALUE - count) {
            throw reader.corrupt("bad block range [" + first + ", +" + count + ")");
        }
        if (extents < 0 || (long) extents * ENCODED_EXTENT_BYTES > reader.remaining()) {
            throw reader.corrupt("free extent count " + extents + " does not fit in " + reader.remaining()
                    + " bytes");
        }
        FreeSpaceAllocator allocator = allAllocated(first, count);
        long previousEnd = -1;
        for (int i = 0; i < extents; i++) {
            long start = reader.getLong();
            long length = reader.getLong();
            if (length < 1 || start < Math.max(first, previousEnd + 1) || start - first > count - length) {
                throw reader.corrupt("free extent " + i + " [" + start + ", +" + length + ") is empty, outside "
                        + allocator + ", or overlaps or touches the one before it");
            }
            allocator.add(new BlockRange(start, length));
            previousEnd = start + length;
        }
        return allocator;
    }

    /**
     * Verifies the invariants in the class comment (for fsck).
     *
     * @throws CorruptFileSystemException naming the first extent that breaks them
     */
    public synchronized void checkConsistent() throws CorruptFileSystemException {
        long sum = 0;
        BlockRange previous = null;
        for (var entry : byStart.entrySet()) {
            BlockRange range = entry.getValue();
            if (entry.getKey() != range.start() || !byLength.contains(range)) {
                throw new CorruptFileSystemException(this + ": free extent " + range + " is indexed wrongly");
            }
            if (range.start() < firstBlock || range.end() > firstBlock + blockCount) {
                throw new CorruptFileSystemException(this + ": free extent " + range + " is outside the range");
            }
            if (previous != null && range.start() <= previous.end()) {
                throw new CorruptFileSystemException(this + ": free extents " + previous + " and " + range
                        + " overlap or touch");
            }
            sum += range.length();
            previous = range;
        }
        if (byLength.size() != byStart.size()) {
            throw new CorruptFileSystemException(this + ": " + byStart.size() + " extents by start but "
                    + byLength.size() + " by length");
        }
        if (sum != freeBlocks) {
            throw new CorruptFileSystemException(this + ": free extents hold " + sum
                    + " blocks but the count says " + freeBlocks);
        }
    }

    @Override
    public String toString() {
        return "free space of blocks [" + firstBlock + ", +" + blockCount + ")";
    }

    /** @return the placement of {@code want} blocks closest to {@code near}, or null if none is near */
    private BlockRange nearFit(long want, long near) {
        BlockRange best = null;
        long bestDistance = Long.MAX_VALUE;
        var left = byStart.headMap(near, true).descendingMap().values().iterator();
        var right = byStart.tailMap(near, false).values().iterator();
        for (int step = 0; step < NEAR_SEARCH_LIMIT && (left.hasNext() || right.hasNext()); step++) {
            if (left.hasNext()) {
                BlockRange range = left.next();
                if (range.length() >= want) {
                    long start = range.end() - want;
                    if (range.contains(near) && near <= start) {
                        start = near;
                    }
                    long distance = Math.abs(near - start);
                    if (distance < bestDistance) {
                        best = new BlockRange(start, want);
                        bestDistance = distance;
                    }
                }
            }
            if (right.hasNext()) {
                BlockRange range = right.next();
                long distance = range.start() - near;
                if (range.length() >= want && distance < bestDistance) {
                    best = new BlockRange(range.start(), want);
                    bestDistance = distance;
                }
            }
        }
        return best;
    }

    /** Removes {@code taken}, which lies inside one free extent, from the free space. */
    private void take(BlockRange taken) {
        BlockRange holder = byStart.floorEntry(taken.start()).getValue();
        remove(holder);
        if (holder.start() < taken.start()) {
            add(new BlockRange(holder.start(), taken.start() - holder.start()));
        }
        if (taken.end() < holder.end()) {
            add(new BlockRange(taken.end(), holder.end() - taken.end()));
        }
    }

    private BlockRange checkInside(String what, long start, long length) throws InvalidRangeException {
        if (length < 1 || start < firstBlock || start - firstBlock > blockCount - length) {
            throw new InvalidRangeException(what + ": blocks [" + start + ", +" + length
                    + ") are empty or not inside " + this);
        }
        return new BlockRange(start, length);
    }

    private void add(BlockRange range) {
        byStart.put(range.start(), range);
        byLength.add(range);
        freeBlocks += range.length();
    }

    private void remove(BlockRange range) {
        byStart.remove(range.start());
        byLength.remove(range);
        freeBlocks -= range.length();
    }
}
