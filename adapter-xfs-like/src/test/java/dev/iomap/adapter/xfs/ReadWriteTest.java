package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReadWriteTest {
    private static final int[] SIZES = {0, 1, 4095, 4096, 4097, (1 << 20) + 13, 3 * 4096 + 100, 65536};

    @Test
    void filesOfManySizesSurviveRemount() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.mkdir("/dir");
            fx.fs.mkdir("/dir/sub");
            Map<String, byte[]> files = new LinkedHashMap<>();
            for (int i = 0; i < SIZES.length; i++) {
                for (String dir : new String[] {"", "/dir", "/dir/sub"}) {
                    String path = dir + "/file-" + SIZES[i];
                    byte[] data = pattern(i + dir.length(), 0, SIZES[i]);
                    files.put(path, data);
                    fx.write(path, data).close();
                }
            }
            for (var file : files.entrySet()) {
                assertThat(fx.readFile(file.getKey())).as(file.getKey()).isEqualTo(file.getValue());
            }
            fx.fs.sync();
            fx.remount();
            for (var file : files.entrySet()) {
                assertThat(fx.readFile(file.getKey())).as(file.getKey()).isEqualTo(file.getValue());
                assertThat(fx.fs.stat(file.getKey()).size()).isEqualTo(file.getValue().length);
            }
            assertThat(fx.fs.readdir("/dir/sub")).hasSize(SIZES.length);
        }
    }

    @Test
    void sparseFilesKeepTheirHoles() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            long statBefore = fx.fs.statfs().freeBlocks();
            byte[] a = pattern(1, 0, 5000);
            byte[] b = pattern(2, 0, 3);
            try (IomapFile file = fx.fs.create("/sparse")) {
                XfsFixture.writeAt(file, 10_000_000, a);
                XfsFixture.writeAt(file, 100, b);
                XfsFixture.writeAt(file, 40_000_001, b);
                file.fsync();
            }
            fx.remount();
            try (IomapFile file = fx.fs.open("/sparse")) {
                assertThat(file.size()).isEqualTo(40_000_004);
                assertThat(XfsFixture.read(file, 0, 100)).containsOnly(0);
                assertThat(XfsFixture.read(file, 100, 3)).isEqualTo(b);
                assertThat(XfsFixture.read(file, 103, 9_999_897)).containsOnly(0);
                assertThat(XfsFixture.read(file, 10_000_000, 5000)).isEqualTo(a);
                assertThat(XfsFixture.read(file, 10_005_000, 29_995_001)).containsOnly(0);
                assertThat(XfsFixture.read(file, 40_000_001, 3)).isEqualTo(b);
                assertThat(file.stat().allocatedBytes()).isEqualTo(4 * 4096);
            }
            // Four data blocks and the root directory's first block.
            assertThat(statBefore - fx.fs.statfs().freeBlocks()).isEqualTo(5);
        }
    }

    @Test
    void overwritesAndAppendsInPlace() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] expected = pattern(4, 0, 300_000);
            try (IomapFile file = fx.write("/f", expected)) {
                file.fsync();
                byte[] patch = pattern(5, 0, 10_000);
                XfsFixture.writeAt(file, 12_345, patch);
                System.arraycopy(patch, 0, expected, 12_345, patch.length);
                byte[] tail = pattern(6, 0, 7000);
                XfsFixture.writeAt(file, expected.length, tail);
                byte[] grown = new byte[expected.length + tail.length];
                System.arraycopy(expected, 0, grown, 0, expected.length);
                System.arraycopy(tail, 0, grown, expected.length, tail.length);
                expected = grown;
                file.fdatasync();
            }
            fx.remount();
            assertThat(fx.readFile("/f")).isEqualTo(expected);
        }
    }

    @Test
    void truncateDownAndUp() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(7, 0, 100_000);
            long free = fx.fs.statfs().freeBlocks();
            try (IomapFile file = fx.write("/f", data)) {
                file.fsync();
                file.truncate(10_001);
                file.truncate(50_000);
                file.fsync();
            }
            fx.remount();
            byte[] read = fx.readFile("/f");
            assertThat(read).hasSize(50_000);
            assertThat(java.util.Arrays.copyOf(read, 10_001)).isEqualTo(java.util.Arrays.copyOf(data, 10_001));
            assertThat(java.util.Arrays.copyOfRange(read, 10_001, 50_000)).containsOnly(0);
            // Three data blocks and the root directory's block.
            assertThat(free - fx.fs.statfs().freeBlocks()).isEqualTo(4);
            fx.fs.unlink("/f");
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free);
        }
    }

    @Test
    void readsAfterDroppingTheCacheComeFromTheDevice() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(8, 0, 2_000_000);
            try (IomapFile file = fx.write("/f", data)) {
                file.fsync();
                fx.fs.dropCleanCache();
                assertThat(XfsFixture.readAll(file)).isEqualTo(data);
            }
        }
    }
}
