package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.IomapFile;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class FallocateTest {
    private static final int BLOCK = 4096;

    @Test
    void allocateExtendsTheFileWithZeroes() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            try (IomapFile file = fx.fs.create("/f")) {
                file.fallocate(FallocateMode.ALLOCATE, 0, 100_000, false);
                assertThat(file.size()).isEqualTo(100_000);
                assertThat(XfsFixture.readAll(file)).hasSize(100_000).containsOnly(0);
                assertThat(file.stat().allocatedBytes()).isEqualTo(25 * BLOCK);
                XfsFixture.writeAt(file, 50_000, pattern(1, 0, 1000));
                file.fsync();
            }
            fx.remount();
            byte[] expected = new byte[100_000];
            System.arraycopy(pattern(1, 0, 1000), 0, expected, 50_000, 1000);
            assertThat(fx.readFile("/f")).isEqualTo(expected);
            assertThat(fx.fs.stat("/f").allocatedBytes()).isEqualTo(25 * BLOCK);
        }
    }

    @Test
    void allocateKeepSizePreallocatesPastEof() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            long free = fx.fs.statfs().freeBlocks();
            try (IomapFile file = fx.fs.create("/f")) {
                file.fallocate(FallocateMode.ALLOCATE, 0, 10 * BLOCK, true);
                assertThat(file.size()).isZero();
                XfsFixture.writeAt(file, 0, pattern(2, 0, 5000));
                file.fsync();
            }
            fx.remount();
            assertThat(fx.readFile("/f")).isEqualTo(pattern(2, 0, 5000));
            assertThat(fx.fs.stat("/f").allocatedBytes()).isEqualTo(10 * BLOCK);
            // Ten preallocated blocks and the root directory's block; nothing more for the write.
            assertThat(free - fx.fs.statfs().freeBlocks()).isEqualTo(11);
        }
    }

    @Test
    void punchHoleFreesWholeBlocksAndZeroesTheEdges() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(3, 0, 100_000);
            try (IomapFile file = fx.write("/f", data)) {
                file.fsync();
                file.fallocate(FallocateMode.PUNCH_HOLE, 5000, 20_000, true);
                assertThat(file.size()).isEqualTo(100_000);
                file.fsync();
            }
            Arrays.fill(data, 5000, 25_000, (byte) 0);
            assertThat(fx.readFile("/f")).isEqualTo(data);
            fx.remount();
            assertThat(fx.readFile("/f")).isEqualTo(data);
            // Blocks 2-5 ([8192, 24576)) are whole inside the range.
            assertThat(fx.fs.stat("/f").allocatedBytes()).isEqualTo(21 * BLOCK);
        }
    }

    @Test
    void zeroRangeKeepSize() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(4, 0, 100_000);
            try (IomapFile file = fx.write("/f", data)) {
                file.fsync();
                file.fallocate(FallocateMode.ZERO_RANGE, 90_000, 50_000, true);
                assertThat(file.size()).isEqualTo(100_000);
                file.fsync();
            }
            Arrays.fill(data, 90_000, 100_000, (byte) 0);
            fx.remount();
            assertThat(fx.readFile("/f")).isEqualTo(data);
            // Blocks 0-24 of data, plus 25-33 allocated unwritten up to the last whole block of the range.
            assertThat(fx.fs.stat("/f").allocatedBytes()).isEqualTo(34 * BLOCK);
        }
    }

    @Test
    void zeroRangeGrowingTheFile() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(5, 0, 100_000);
            try (IomapFile file = fx.write("/f", data)) {
                file.fsync();
                file.fallocate(FallocateMode.ZERO_RANGE, 10_000, 130_000, false);
                assertThat(file.size()).isEqualTo(140_000);
                file.fsync();
            }
            byte[] expected = Arrays.copyOf(data, 140_000);
            Arrays.fill(expected, 10_000, 140_000, (byte) 0);
            assertThat(fx.readFile("/f")).isEqualTo(expected);
            fx.remount();
            assertThat(fx.readFile("/f")).isEqualTo(expected);
        }
    }

    @Test
    void writesIntoUnwrittenExtentsAreConvertedAtCompletion() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] expected = new byte[64 * BLOCK];
            try (IomapFile file = fx.fs.create("/f")) {
                file.fallocate(FallocateMode.ALLOCATE, 0, 64 * BLOCK, false);
                for (int i = 0; i < 64; i += 3) {
                    byte[] chunk = pattern(i, 0, BLOCK / 2);
                    XfsFixture.writeAt(file, (long) i * BLOCK + 100, chunk);
                    System.arraycopy(chunk, 0, expected, i * BLOCK + 100, chunk.length);
                }
                file.fdatasync();
            }
            fx.remount();
            assertThat(fx.readFile("/f")).isEqualTo(expected);
        }
    }
}
