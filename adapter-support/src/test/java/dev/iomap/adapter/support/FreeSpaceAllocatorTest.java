package dev.iomap.adapter.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NoSpaceException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class FreeSpaceAllocatorTest {
    private static final long SEED = Long.getLong("iomap.test.seed", 0);
    private static final int OPS = Integer.getInteger("iomap.test.ops", 2_000);

    /** Free: [100, +50), [500, +20), [900, +100) of [0, +1000). */
    private static FreeSpaceAllocator threeHoles() throws Exception {
        FreeSpaceAllocator allocator = FreeSpaceAllocator.allAllocated(0, 1000);
        allocator.free(100, 50);
        allocator.free(500, 20);
        allocator.free(900, 100);
        return allocator;
    }

    @Test
    void startsAllFreeOrAllAllocated() {
        assertThat(FreeSpaceAllocator.allFree(100, 1000).freeExtents()).containsExactly(new BlockRange(100, 1000));
        assertThat(FreeSpaceAllocator.allFree(100, 1000).freeBlocks()).isEqualTo(1000);
        assertThat(FreeSpaceAllocator.allAllocated(100, 1000).freeBlocks()).isZero();
        assertThatThrownBy(() -> FreeSpaceAllocator.allFree(0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void freeCoalescesWithBothNeighbours() throws Exception {
        FreeSpaceAllocator allocator = FreeSpaceAllocator.allAllocated(0, 100);
        allocator.free(10, 5);
        allocator.free(20, 5);
        assertThat(allocator.freeExtentCount()).isEqualTo(2);

        allocator.free(15, 5);
        allocator.free(5, 5);
        allocator.free(25, 75);

        assertThat(allocator.freeExtents()).containsExactly(new BlockRange(5, 95));
        assertThat(allocator.freeBlocks()).isEqualTo(95);
        assertThat(allocator.largestFreeExtent()).isEqualTo(95);
        allocator.checkConsistent();
    }

    @Test
    void allocatesAtTheHintWhenItIsFreeWithRoomAfterIt() throws Exception {
        FreeSpaceAllocator allocator = threeHoles();

        assertThat(allocator.allocate(10, 505, 10)).isEqualTo(new BlockRange(505, 10));
        assertThat(allocator.freeExtents()).contains(new BlockRange(500, 5), new BlockRange(515, 5));
    }

    @Test
    void allocatesTheClosestPlacementToTheHint() throws Exception {
        assertThat(threeHoles().allocate(10, 515, 10)).as("end of the extent holding the hint")
                .isEqualTo(new BlockRange(510, 10));
        assertThat(threeHoles().allocate(10, 160, 10)).as("end of the extent before the hint")
                .isEqualTo(new BlockRange(140, 10));
        assertThat(threeHoles().allocate(10, 480, 10)).as("start of the extent after the hint")
                .isEqualTo(new BlockRange(500, 10));
        assertThat(threeHoles().allocate(30, 520, 30)).as("the closest extent that is large enough")
                .isEqualTo(new BlockRange(900, 30));
        assertThat(threeHoles().allocate(10, 5000, 10)).as("a hint past the end")
                .isEqualTo(new BlockRange(990, 10));
    }

    @Test
    void withoutAHintAllocatesTheBestFit() throws Exception {
        FreeSpaceAllocator allocator = threeHoles();

        assertThat(allocator.allocate(15, -1, 15)).isEqualTo(new BlockRange(500, 15));
        assertThat(allocator.allocate(40, -1, 1)).isEqualTo(new BlockRange(100, 40));
    }

    @Test
    void returnsLessThanWantedButAtLeastTheMinimum() throws Exception {
        FreeSpaceAllocator allocator = threeHoles();

        assertThat(allocator.allocate(200, -1, 60)).isEqualTo(new BlockRange(900, 100));
        assertThatThrownBy(() -> allocator.allocate(200, 950, 60))
                .isInstanceOf(NoSpaceException.class)
                .hasMessage("cannot allocate 60 contiguous blocks in free space of blocks [0, +1000): the largest free"
                        + " extent is 50 blocks, 70 free in all");
        assertThat(allocator.freeBlocks()).isEqualTo(70);
    }

    @Test
    void exhaustionIsNoSpace() throws Exception {
        FreeSpaceAllocator allocator = FreeSpaceAllocator.allFree(0, 10);
        assertThat(allocator.allocate(10, 3, 10)).isEqualTo(new BlockRange(0, 10));

        assertThatThrownBy(() -> allocator.allocate(1, -1, 1))
                .isInstanceOf(NoSpaceException.class)
                .hasMessage("cannot allocate 1 contiguous blocks in free space of blocks [0, +10): the largest free"
                        + " extent is 0 blocks, 0 free in all");
    }

    @Test
    void allocateExactTakesExactlyThoseBlocksOrNothing() throws Exception {
        FreeSpaceAllocator allocator = threeHoles();

        allocator.allocateExact(110, 10);

        assertThat(allocator.freeExtents()).startsWith(new BlockRange(100, 10), new BlockRange(120, 30));
        assertThatThrownBy(() -> allocator.allocateExact(140, 20))
                .isInstanceOf(NoSpaceException.class)
                .hasMessage("allocateExact: blocks [140, +20) are not all free in free space of blocks [0, +1000):"
                        + " block 150 is in use");
        assertThatThrownBy(() -> allocator.allocateExact(95, 10))
                .isInstanceOf(NoSpaceException.class)
                .hasMessageEndingWith("block 95 is in use");
        assertThat(allocator.freeBlocks()).isEqualTo(160);
    }

    @Test
    void aDoubleFreeIsCorruptionAndChangesNothing() throws Exception {
        FreeSpaceAllocator allocator = FreeSpaceAllocator.allFree(0, 100);
        allocator.allocateExact(0, 50);

        assertThatThrownBy(() -> allocator.free(45, 10))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("double free in free space of blocks [0, +100): freeing blocks [45, +10) but free extent"
                        + " [50, +50) overlaps them");
        assertThatThrownBy(() -> allocator.free(60, 1)).isInstanceOf(CorruptFileSystemException.class);
        assertThat(allocator.freeExtents()).containsExactly(new BlockRange(50, 50));
        assertThat(allocator.firstFreeOverlap(new BlockRange(40, 11))).contains(new BlockRange(50, 50));
        assertThat(allocator.firstFreeOverlap(new BlockRange(40, 10))).isEmpty();
    }

    @Test
    void refusesBadArguments() {
        FreeSpaceAllocator allocator = FreeSpaceAllocator.allFree(100, 100);

        assertThatThrownBy(() -> allocator.free(90, 20))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("free: blocks [90, +20) are empty or not inside free space of blocks [100, +100)");
        assertThatThrownBy(() -> allocator.free(150, 51)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> allocator.allocateExact(150, 0)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> allocator.isFree(150, Long.MAX_VALUE)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> allocator.allocate(5, -1, 6))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("allocate: want 5 blocks, at least 6: need 1 <= minBlocks <= wantBlocks");
        assertThatThrownBy(() -> allocator.allocate(5, -1, 0)).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void encodesAndDecodes() throws Exception {
        FreeSpaceAllocator allocator = FreeSpaceAllocator.allAllocated(16, 64);
        allocator.free(20, 4);
        allocator.free(40, 8);

        byte[] encoded = allocator.encode();

        assertThat(HexFormat.of().formatHex(encoded)).isEqualTo("1000000000000000" + "4000000000000000" + "02000000"
                + "1400000000000000" + "0400000000000000" + "2800000000000000" + "0800000000000000");
        FreeSpaceAllocator decoded = FreeSpaceAllocator.decode(ByteBuffer.wrap(encoded), "AG 0 free space");
        assertThat(decoded.freeExtents()).isEqualTo(allocator.freeExtents());
        assertThat(decoded.freeBlocks()).isEqualTo(12);
        assertThat(decoded.firstBlock()).isEqualTo(16);
        assertThat(decoded.blockCount()).isEqualTo(64);
        decoded.checkConsistent();
    }

    @Test
    void decodeRefusesDamagedEncodings() {
        assertCorrupt(encoding(0, 64, 20, 4, 22, 4), "free extent 1 [22, +4) is empty, outside free space of blocks"
                + " [0, +64), or overlaps or touches the one before it");
        assertCorrupt(encoding(0, 64, 20, 4, 24, 4), "free extent 1 [24, +4)");
        assertCorrupt(encoding(0, 64, 60, 8), "free extent 0 [60, +8)");
        assertCorrupt(encoding(0, 64, 10, 0), "free extent 0 [10, +0)");
        assertCorrupt(encoding(5, -1), "bad block range [5, +-1)");
        ByteBuffer truncated = ByteBuffer.wrap(FreeSpaceAllocator.allFree(0, 8).encode(), 0, 30);
        assertThatThrownBy(() -> FreeSpaceAllocator.decode(truncated, "AG 3 free space"))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessageStartingWith("AG 3 free space: free extent count 1 does not fit in 10 bytes");
    }

    /** Random allocations, exact allocations, frees and double frees against a bitmap of used blocks. */
    @Test
    void randomOperationsMatchABitmap() throws Exception {
        Random random = new Random(SEED);
        long first = 1000;
        int count = 512;
        FreeSpaceAllocator allocator = FreeSpaceAllocator.allFree(first, count);
        BitSet used = new BitSet(count);
        List<BlockRange> allocated = new ArrayList<>();
        for (int op = 0; op < OPS; op++) {
            switch (random.nextInt(4)) {
                case 0 -> {
                    long want = 1L + random.nextInt(40);
                    long min = 1L + random.nextInt((int) want);
                    long near = random.nextBoolean() ? -1 : first + random.nextInt(count + 20);
                    if (longestFreeRun(used, count) < min) {
                        assertThatThrownBy(() -> allocator.allocate(want, near, min)).isInstanceOf(NoSpaceException.class);
                        break;
                    }
                    BlockRange got = allocator.allocate(want, near, min);
                    assertThat(got.length()).isBetween(min, want);
                    markUsed(used, got, first, op);
                    allocated.add(got);
                }
                case 1 -> {
                    long start = first + random.nextInt(count);
                    long length = 1L + random.nextInt((int) Math.min(16, first + count - start));
                    int from = (int) (start - first);
                    if (used.get(from, from + (int) length).isEmpty()) {
                        allocator.allocateExact(start, length);
                        markUsed(used, new BlockRange(start, length), first, op);
                        allocated.add(new BlockRange(start, length));
                    } else {
                        assertThatThrownBy(() -> allocator.allocateExact(start, length))
                                .isInstanceOf(NoSpaceException.class);
                    }
                }
                case 2 -> {
                    if (allocated.isEmpty()) {
                        break;
                    }
                    BlockRange range = allocated.remove(random.nextInt(allocated.size()));
                    long cut = range.start() + random.nextInt((int) range.length());
                    freeBoth(allocator, used, first, range.start(), cut - range.start());
                    freeBoth(allocator, used, first, cut, range.end() - cut);
                }
                default -> {
                    long start = first + random.nextInt(count);
                    long length = 1L + random.nextInt((int) Math.min(8, first + count - start));
                    int from = (int) (start - first);
                    if (used.get(from, from + (int) length).cardinality() < length) {
                        long freeBefore = allocator.freeBlocks();
                        assertThatThrownBy(() -> allocator.free(start, length))
                                .isInstanceOf(CorruptFileSystemException.class);
                        assertThat(allocator.freeBlocks()).isEqualTo(freeBefore);
                    }
                }
            }
            allocator.checkConsistent();
            assertThat(allocator.freeBlocks()).as("op %d", op).isEqualTo(count - used.cardinality());
            assertThat(allocator.freeExtents()).as("op %d", op).isEqualTo(freeRuns(used, first, count));
            assertThat(FreeSpaceAllocator.decode(ByteBuffer.wrap(allocator.encode()), "t").freeExtents())
                    .isEqualTo(allocator.freeExtents());
        }
    }

    @Test
    void concurrentAllocationsNeverOverlap() throws Exception {
        FreeSpaceAllocator allocator = FreeSpaceAllocator.allFree(0, 4000);
        var got = new ConcurrentLinkedQueue<BlockRange>();
        var workers = new ArrayList<Future<?>>();
        try (var pool = Executors.newFixedThreadPool(4)) {
            for (int t = 0; t < 4; t++) {
                workers.add(pool.submit(() -> {
                    while (true) {
                        try {
                            got.add(allocator.allocate(3, -1, 1));
                        } catch (NoSpaceException e) {
                            return null;
                        }
                    }
                }));
            }
        }
        for (Future<?> worker : workers) {
            worker.get(); // rethrows what a worker threw: the allocator must fail only with NoSpaceException
        }
        BitSet seen = new BitSet();
        for (BlockRange range : got) {
            assertThat(seen.get((int) range.start(), (int) range.end()).isEmpty()).isTrue();
            seen.set((int) range.start(), (int) range.end());
        }
        assertThat(seen.cardinality()).isEqualTo(4000);
        assertThat(allocator.freeBlocks()).isZero();
    }

    private static void freeBoth(FreeSpaceAllocator allocator, BitSet used, long first, long start, long length)
            throws Exception {
        if (length == 0) {
            return;
        }
        allocator.free(start, length);
        used.clear((int) (start - first), (int) (start - first + length));
    }

    private static void markUsed(BitSet used, BlockRange range, long first, int op) {
        int from = (int) (range.start() - first);
        int to = (int) (range.end() - first);
        assertThat(from).as("op %d: %s inside the allocator", op, range).isGreaterThanOrEqualTo(0);
        assertThat(used.get(from, to).isEmpty()).as("op %d: %s was free", op, range).isTrue();
        used.set(from, to);
    }

    private static long longestFreeRun(BitSet used, int count) {
        long longest = 0;
        for (BlockRange run : freeRuns(used, 0, count)) {
            longest = Math.max(longest, run.length());
        }
        return longest;
    }

    private static List<BlockRange> freeRuns(BitSet used, long first, int count) {
        List<BlockRange> runs = new ArrayList<>();
        int at = used.nextClearBit(0);
        while (at < count) {
            int end = Math.min(count, used.nextSetBit(at) < 0 ? count : used.nextSetBit(at));
            runs.add(new BlockRange(first + at, end - at));
            at = used.nextClearBit(end);
        }
        return runs;
    }

    private static ByteBuffer encoding(long first, long count, long... pairs) {
        ByteBuffer bytes = ByteBuffer.allocate(20 + 8 * pairs.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        bytes.putLong(first).putLong(count).putInt(pairs.length / 2);
        for (long value : pairs) {
            bytes.putLong(value);
        }
        return bytes.flip();
    }

    private static void assertCorrupt(ByteBuffer encoding, String detail) {
        assertThatThrownBy(() -> FreeSpaceAllocator.decode(encoding, "AG 3 free space"))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessageStartingWith("AG 3 free space: " + detail);
    }
}
