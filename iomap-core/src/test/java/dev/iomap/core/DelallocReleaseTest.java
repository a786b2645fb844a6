package dev.iomap.core;

import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class DelallocReleaseTest {
    private static final int K1 = 1024;

    private final RamBlockDevice device = new RamBlockDevice(K1, 8L << 20);

    private IomapCache cache() {
        return new IomapCache(PageCacheOptions.builder().maxFolioOrder(0).build(), device);
    }

    private static TreeSet<Long> blocks(long first, long endExclusive) {
        TreeSet<Long> set = new TreeSet<>();
        LongStream.range(first, endExclusive).forEach(set::add);
        return set;
    }

    @Test
    void aWriteThatFailsHalfWayPunchesOnlyTheCleanPartOfItsReservation() throws Exception {
        DelallocTestOps ops = new DelallocTestOps(K1);
        OpenFile file = cache().addInode(1, K1, 0, 1L << 40, ops, ops).open();
        file.write(30 * K1, buffer(1, 30 * K1, K1));   // dirty, reserved earlier

        // 40 KiB from 0; the copy faults 100 bytes into the sixth 4 KiB folio: those 100 bytes are written
        // again alone and kept, so block 20 holds data.
        long written = file.write(0, TestIo.shortSource(pattern(2, 0, 40 * K1), 20 * K1 + 100), 40 * K1);

        assertThat(written).isEqualTo(20 * K1 + 100);
        TreeSet<Long> expected = blocks(0, 21);
        expected.add(30L);
        assertThat(ops.reserved()).isEqualTo(expected);
        assertThat(ops.punches).extracting(range -> List.of(range[0], range[1]))
                .containsExactly(List.of(21L * K1, 9L * K1), List.of(31L * K1, 9L * K1));
    }

    @Test
    void aWriteThatWritesNothingPunchesFromTheBlockItStartedIn() throws Exception {
        DelallocTestOps ops = new DelallocTestOps(K1);
        OpenFile file = cache().addInode(1, K1, 0, 1L << 40, ops, ops).open();

        long written = file.write(K1 + 10, TestIo.shortSource(pattern(3, 0, 5 * K1), 0), 5 * K1);

        assertThat(written).isZero();
        assertThat(ops.reserved()).isEmpty();
        assertThat(ops.punches).extracting(range -> List.of(range[0], range[1]))
                .containsExactly(List.of((long) K1, 6L * K1));
    }

    @Test
    void dirtyBlocksOfAPartlyDirtyFolioKeepTheirReservation() throws Exception {
        DelallocTestOps ops = new DelallocTestOps(K1);
        OpenFile file = cache().addInode(1, K1, 0, 1L << 40, ops, ops).open();
        file.write(5 * K1, buffer(4, 5 * K1, K1));   // block 5 of folio 1 dirty

        long written = file.write(4 * K1, TestIo.shortSource(pattern(5, 0, 4 * K1), 0), 4 * K1);

        assertThat(written).isZero();
        assertThat(ops.reserved()).containsExactly(5L);
        assertThat(ops.punches).extracting(range -> List.of(range[0], range[1]))
                .containsExactly(List.of(4L * K1, (long) K1), List.of(6L * K1, 2L * K1));
    }

    @Test
    void offsetsPastFourBillionPagesUseSixtyFourBitArithmetic() throws Exception {
        DelallocTestOps ops = new DelallocTestOps(K1);
        OpenFile file = cache().addInode(1, K1, 0, 1L << 50, ops, ops).open();
        long base = (1L << 44) + 4096;   // page index 2^32 + 1: an int page index would wrap
        file.write(base + 8 * K1, buffer(6, 0, K1));

        long written = file.write(base, TestIo.shortSource(pattern(7, 0, 12 * K1), 4 * K1 + 1), 12 * K1);

        assertThat(written).isEqualTo(4 * K1 + 1);
        long firstBlock = base / K1;
        TreeSet<Long> expected = blocks(firstBlock, firstBlock + 5);
        expected.add(firstBlock + 8);
        assertThat(ops.reserved()).isEqualTo(expected);
        assertThat(ops.punches).extracting(range -> List.of(range[0], range[1]))
                .containsExactly(List.of(base + 5 * K1, 3L * K1), List.of(base + 9 * K1, 3L * K1));
    }
}
