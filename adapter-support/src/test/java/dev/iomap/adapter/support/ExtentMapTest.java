package dev.iomap.adapter.support;

import static dev.iomap.adapter.support.Extent.delalloc;
import static dev.iomap.adapter.support.Extent.unwritten;
import static dev.iomap.adapter.support.Extent.written;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.spi.IomapType;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ExtentMapTest {
    private static final long SEED = Long.getLong("iomap.test.seed", 0);
    private static final int OPS = Integer.getInteger("iomap.test.ops", 2_000);
    private static final long END = ExtentMap.END;

    private final ExtentMap map = new ExtentMap();

    @Test
    void anEmptyMapIsOneHole() throws Exception {
        assertThat(map.lookup(0)).isEqualTo(new Hole(0, END));
        assertThat(map.lookup(1L << 50)).isEqualTo(new Hole(0, END));
        assertThat(map.endBlock()).isZero();
        assertThat(map.mappings(5, 10)).containsExactly(new Hole(5, 10));
    }

    @Test
    void lookupReturnsTheWholeExtentOrTheWholeHoleAroundABlock() throws Exception {
        map.insert(written(10, 5, 100));
        map.insert(unwritten(30, 5, 300));

        assertThat(map.lookup(12)).isEqualTo(written(10, 5, 100));
        assertThat(map.lookup(9)).isEqualTo(new Hole(0, 10));
        assertThat(map.lookup(15)).isEqualTo(new Hole(15, 15));
        assertThat(map.lookup(34)).isEqualTo(unwritten(30, 5, 300));
        assertThat(map.lookup(35)).isEqualTo(new Hole(35, END - 35));
        assertThat(((Extent) map.lookup(12)).deviceBlockOf(12)).isEqualTo(102);
        assertThatThrownBy(() -> map.lookup(-1)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> map.lookup(END)).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void insertMergesWithNeighboursThatContinueIt() throws Exception {
        map.insert(written(10, 5, 100));
        map.insert(written(15, 5, 105));                        // continues on the right
        map.insert(written(20, 5, 200));                        // not contiguous on the device
        map.insert(written(5, 5, 95));                          // continues on the left

        assertThat(map.extents()).containsExactly(written(5, 15, 95), written(20, 5, 200));

        map.insert(written(0, 5, 90));
        map.insert(written(25, 5, 205));

        assertThat(map.extents()).containsExactly(written(0, 20, 90), written(20, 10, 200));
        assertThat(map.mappedBlocks()).isEqualTo(30);
    }

    @Test
    void insertFillingAGapMergesBothSides() throws Exception {
        map.insert(written(0, 5, 50));
        map.insert(written(8, 2, 58));

        map.insert(written(5, 3, 55));

        assertThat(map.extents()).containsExactly(written(0, 10, 50));
    }

    @Test
    void onlyCompatibleExtentsMerge() throws Exception {
        map.insert(written(0, 5, 50));
        map.insert(unwritten(5, 5, 55));
        map.insert(written(10, 5, 60).withShared(true));
        map.insert(delalloc(15, 5));
        map.insert(delalloc(20, 5));

        assertThat(map.extents()).containsExactly(written(0, 5, 50), unwritten(5, 5, 55),
                written(10, 5, 60).withShared(true), delalloc(15, 10));
        map.checkInvariants();
    }

    @Test
    void insertOverAnExtentIsRefusedNamingBoth() throws Exception {
        map.insert(written(10, 5, 100));

        assertThatThrownBy(() -> map.insert(written(14, 3, 500)))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("extent map: cannot insert Extent[fileBlock=14, length=3, deviceBlock=500, state=WRITTEN,"
                        + " shared=false]: it overlaps Extent[fileBlock=10, length=5, deviceBlock=100, state=WRITTEN,"
                        + " shared=false]");
        assertThatThrownBy(() -> map.insert(written(0, 11, 500))).isInstanceOf(InvalidRangeException.class);
        assertThat(map.extents()).containsExactly(written(10, 5, 100));
    }

    @Test
    void punchSplitsExtentsAndReturnsWhatItRemoved() throws Exception {
        map.insert(written(0, 20, 90));

        assertThat(map.punch(5, 3)).containsExactly(written(5, 3, 95));
        assertThat(map.extents()).containsExactly(written(0, 5, 90), written(8, 12, 98));

        map.insert(unwritten(30, 10, 300));
        assertThat(map.punch(3, 30)).containsExactly(written(3, 2, 93), written(8, 12, 98), unwritten(30, 3, 300));
        assertThat(map.extents()).containsExactly(written(0, 3, 90), unwritten(33, 7, 303));
        assertThat(map.punch(100, 10)).isEmpty();
        assertThat(map.punch(0, 0)).isEmpty();
        assertThat(map.mappedBlocks()).isEqualTo(10);
        map.checkInvariants();
    }

    @Test
    void replaceConvertsUnwrittenPiecesAndMergesThemBack() throws Exception {
        map.insert(unwritten(0, 10, 50));

        assertThat(map.replace(written(3, 2, 53))).containsExactly(unwritten(3, 2, 53));
        assertThat(map.extents()).containsExactly(unwritten(0, 3, 50), written(3, 2, 53), unwritten(5, 5, 55));

        map.replace(written(0, 3, 50));
        map.replace(written(5, 5, 55));

        assertThat(map.extents()).containsExactly(written(0, 10, 50));
    }

    @Test
    void delallocGetsRealBlocksByReplace() throws Exception {
        map.insert(delalloc(0, 8));

        List<Extent> reserved = map.replace(written(0, 8, 4000));

        assertThat(reserved).containsExactly(delalloc(0, 8));
        assertThat(map.lookup(7)).isEqualTo(written(0, 8, 4000));
        assertThat(ExtentState.DELALLOC.iomapType()).isEqualTo(IomapType.DELALLOC);
        assertThat(ExtentState.WRITTEN.iomapType()).isEqualTo(IomapType.MAPPED);
    }

    @Test
    void rangesAreClippedAndMappingsCoverExactly() throws Exception {
        map.insert(written(10, 10, 100));
        map.insert(unwritten(30, 10, 300));

        assertThat(map.extents(15, 20)).containsExactly(written(15, 5, 105), unwritten(30, 5, 300));
        assertThat(map.mappings(5, 40)).containsExactly(new Hole(5, 5), written(10, 10, 100), new Hole(20, 10),
                unwritten(30, 10, 300), new Hole(40, 5));
        assertThat(map.mappings(12, 3)).containsExactly(written(12, 3, 102));
        assertThatThrownBy(() -> map.mappings(-1, 3)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> map.extents(END - 1, 2)).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void worksBeyondTwoToTheThirtyTwoBlocks() throws Exception {
        long far = (1L << 40) + 7;
        long deviceFar = (1L << 35) + 3;
        map.insert(written(far, 1L << 33, deviceFar));
        map.insert(written(far + (1L << 33), 5, deviceFar + (1L << 33)));
        map.insert(delalloc(END - 10, 10));

        assertThat(map.extents()).containsExactly(written(far, (1L << 33) + 5, deviceFar), delalloc(END - 10, 10));
        assertThat(((Extent) map.lookup(far + (1L << 32))).deviceBlockOf(far + (1L << 32)))
                .isEqualTo(deviceFar + (1L << 32));
        assertThat(map.lookup(END - 1)).isEqualTo(delalloc(END - 10, 10));
        assertThat(map.lookup(far - 1)).isEqualTo(new Hole(0, far));
        assertThat(map.punch(far + (1L << 32), 1)).containsExactly(written(far + (1L << 32), 1, deviceFar + (1L << 32)));
        assertThat(map.mappedBlocks()).isEqualTo((1L << 33) + 5 - 1 + 10);
        assertThat(ExtentMap.decode(ByteBuffer.wrap(map.encode()), "test")).isEqualTo(map);
        assertThatThrownBy(() -> written(END - 1, 2, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void encodesTwentyEightBytesPerExtent() {
        var encoded = new ExtentMap();
        try {
            encoded.insert(written(1, 2, 3));
            encoded.insert(delalloc(10, 1).withShared(true));
        } catch (InvalidRangeException e) {
            throw new AssertionError(e);
        }

        assertThat(encoded.encodedSize()).isEqualTo(4 + 2 * 28);
        assertThat(HexFormat.of().formatHex(encoded.encode())).isEqualTo("02000000"
                + "0100000000000000" + "0200000000000000" + "0300000000000000" + "00000000"
                + "0a00000000000000" + "0100000000000000" + "ffffffffffffffff" + "06000000");
    }

    @Test
    void decodeRefusesDamagedEncodings() {
        assertCorrupt(bytes(w -> w.putInt(2).putLong(0).putLong(1).putLong(0).putInt(0)),
                "extent count 2 does not fit in 28 bytes");
        assertCorrupt(bytes(w -> w.putInt(1).putLong(0).putLong(1).putLong(0).putInt(8)),
                "extent 0 has bad flags 0x00000008");
        assertCorrupt(bytes(w -> w.putInt(1).putLong(0).putLong(1).putLong(0).putInt(3)),
                "extent 0 has bad flags 0x00000003");
        assertCorrupt(bytes(w -> w.putInt(1).putLong(0).putLong(0).putLong(0).putInt(0)),
                "extent 0: extent [0, +0) is negative, empty or overflows");
        assertCorrupt(bytes(w -> w.putInt(1).putLong(0).putLong(1).putLong(5).putInt(2)),
                "extent 0: DELALLOC extent at file block 0 has no device blocks, got device block 5");
        assertCorrupt(bytes(w -> w.putInt(2).putLong(10).putLong(5).putLong(0).putInt(0)
                        .putLong(12).putLong(1).putLong(50).putInt(0)),
                "extent 1 Extent[fileBlock=12, length=1, deviceBlock=50, state=WRITTEN, shared=false] starts before"
                        + " the end 15 of the extent before it");
        assertThatThrownBy(() -> ExtentMap.decode(ByteBuffer.allocate(2), "inode 5 data fork"))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("inode 5 data fork: truncated: int at offset 0 runs past the end (2 bytes left)");
    }

    @Test
    void decodeMergesNeighboursSoTheResultIsCanonical() throws Exception {
        ByteBuffer split = bytes(w -> w.putInt(2).putLong(0).putLong(5).putLong(100).putInt(0)
                .putLong(5).putLong(5).putLong(105).putInt(0));

        assertThat(ExtentMap.decode(split, "test").extents()).containsExactly(written(0, 10, 100));
    }

    /** Random inserts, punches and replaces against one model entry per file block. */
    @Test
    void randomOperationsMatchAPerBlockModel() throws Exception {
        Random random = new Random(SEED);
        int blocks = 256;
        Extent[] model = new Extent[blocks];                  // the one-block extent at each block, or null
        for (int op = 0; op < OPS; op++) {
            long from = random.nextInt(blocks);
            long length = 1L + random.nextInt((int) Math.min(24, blocks - from));
            Extent extent = randomExtent(random, from, length, model);
            switch (random.nextInt(3)) {
                case 0 -> {
                    if (map.extents(from, length).isEmpty()) {
                        map.insert(extent);
                        setModel(model, extent);
                    } else {
                        assertThatThrownBy(() -> map.insert(extent)).isInstanceOf(InvalidRangeException.class);
                    }
                }
                case 1 -> {
                    List<Extent> removed = map.punch(from, length);
                    assertThat(removed).isEqualTo(expectedPieces(model, from, length));
                    Arrays.fill(model, (int) from, (int) (from + length), null);
                }
                default -> {
                    map.replace(extent);
                    setModel(model, extent);
                }
            }
            checkAgainst(model, op);
        }
    }

    private void checkAgainst(Extent[] model, int op) throws Exception {
        map.checkInvariants();
        ExtentMap canonical = new ExtentMap();
        long mapped = 0;
        for (int block = 0; block < model.length; block++) {
            BlockMapping found = map.lookup(block);
            if (model[block] == null) {
                assertThat(found).as("op %d block %d", op, block).isInstanceOf(Hole.class);
                continue;
            }
            mapped++;
            canonical.insert(model[block]);
            Extent extent = (Extent) found;
            assertThat(extent.slice(block, block + 1)).as("op %d block %d", op, block).isEqualTo(model[block]);
        }
        assertThat(map.mappedBlocks()).isEqualTo(mapped);
        assertThat(map).as("op %d: canonical form", op).isEqualTo(canonical);
        assertThat(ExtentMap.decode(ByteBuffer.wrap(map.encode()), "test")).isEqualTo(map);
        long covered = map.mappings(0, model.length).stream().mapToLong(BlockMapping::length).sum();
        assertThat(covered).isEqualTo(model.length);
    }

    /** An extent that, half the time, continues its left neighbour on the device so merges happen. */
    private static Extent randomExtent(Random random, long from, long length, Extent[] model) {
        ExtentState state = ExtentState.values()[random.nextInt(3)];
        boolean shared = random.nextInt(4) == 0;
        if (state == ExtentState.DELALLOC) {
            return new Extent(from, length, Extent.NO_DEVICE_BLOCK, state, shared);
        }
        Extent left = from > 0 ? model[(int) from - 1] : null;
        long deviceBlock = left != null && left.state().hasDeviceBlocks() && random.nextBoolean()
                ? left.deviceBlock() + 1
                : random.nextInt(1 << 20);
        return new Extent(from, length, deviceBlock, state, shared);
    }

    private static void setModel(Extent[] model, Extent extent) {
        for (long block = extent.fileBlock(); block < extent.endBlock(); block++) {
            model[(int) block] = extent.slice(block, block + 1);
        }
    }

    private static List<Extent> expectedPieces(Extent[] model, long from, long length) throws Exception {
        ExtentMap pieces = new ExtentMap();
        for (long block = from; block < from + length; block++) {
            if (model[(int) block] != null) {
                pieces.insert(model[(int) block]);
            }
        }
        return pieces.extents();
    }

    private interface Fields {
        void write(BlockWriter writer) throws InvalidRangeException;
    }

    private static ByteBuffer bytes(Fields fields) {
        BlockWriter writer = BlockWriter.allocate(256, "test");
        try {
            fields.write(writer);
        } catch (InvalidRangeException e) {
            throw new AssertionError(e);
        }
        return writer.written();
    }

    private static void assertCorrupt(ByteBuffer encoding, String detail) {
        assertThatThrownBy(() -> ExtentMap.decode(encoding, "inode 5 data fork"))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessageStartingWith("inode 5 data fork: " + detail);
    }
}
