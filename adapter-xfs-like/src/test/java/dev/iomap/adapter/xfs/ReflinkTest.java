package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import org.junit.jupiter.api.Test;

class ReflinkTest {
    private static final int BLOCK = 4096;

    @Test
    void cloneThenWriteCopiesOnlyTheWrittenBlock() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(1, 0, 100_000);
            try (IomapFile src = fx.write("/src", data); IomapFile dst = fx.fs.create("/dst")) {
                src.fsync();
                long free = fx.fs.statfs().freeBlocks();
                dst.cloneRange(src, 0, 0, data.length);
                assertThat(dst.size()).isEqualTo(data.length);
                assertThat(XfsFixture.readAll(dst)).isEqualTo(data);
                assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free);
                byte[] patch = pattern(2, 0, 10);
                XfsFixture.writeAt(dst, 5000, patch);
                dst.fsync();
                assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free - 1);
                assertThat(XfsFixture.readAll(src)).isEqualTo(data);
            }
            fx.unmountAndCheck();
            assertThat(Images.refcounts(fx.device)).containsExactly(
                    new RefcountMap.Record(firstDataBlock(fx), 1, 2),
                    new RefcountMap.Record(firstDataBlock(fx) + 2, 23, 2));
            fx.mount();
            byte[] expected = data.clone();
            System.arraycopy(pattern(2, 0, 10), 0, expected, 5000, 10);
            assertThat(fx.readFile("/src")).isEqualTo(data);
            assertThat(fx.readFile("/dst")).isEqualTo(expected);
        }
    }

    @Test
    void writingTheSourceLeavesTheCloneAlone() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(3, 0, 40_000);
            try (IomapFile src = fx.write("/src", data); IomapFile dst = fx.fs.create("/dst")) {
                src.fsync();
                dst.cloneRange(src, 0, 0, data.length);
                XfsFixture.writeAt(src, 0, pattern(4, 0, 40_000));
                src.truncate(1000);
                src.fsync();
                assertThat(XfsFixture.readAll(dst)).isEqualTo(data);
            }
            fx.remount();
            assertThat(fx.readFile("/dst")).isEqualTo(data);
            assertThat(fx.readFile("/src")).isEqualTo(java.util.Arrays.copyOf(pattern(4, 0, 40_000), 1000));
        }
    }

    @Test
    void unshareLeavesNoSharing() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(5, 0, 70_000);
            try (IomapFile src = fx.write("/src", data); IomapFile dst = fx.fs.create("/dst")) {
                src.fsync();
                dst.cloneRange(src, 0, 0, data.length);
                long free = fx.fs.statfs().freeBlocks();
                dst.unshare(0, data.length);
                dst.fsync();
                assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free - 18);
                assertThat(XfsFixture.readAll(dst)).isEqualTo(data);
            }
            fx.unmountAndCheck();
            assertThat(Images.refcounts(fx.device)).isEmpty();
            assertThat(Images.sharedExtents(fx.device)).isZero();
            fx.mount();
            assertThat(fx.readFile("/dst")).isEqualTo(data);
            assertThat(fx.readFile("/src")).isEqualTo(data);
        }
    }

    @Test
    void deletingTheSourceKeepsTheCloneAndDropsTheCounts() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(6, 0, 50_000);
            try (IomapFile src = fx.write("/src", data); IomapFile dst = fx.fs.create("/dst")) {
                src.fsync();
                dst.cloneRange(src, 0, 0, data.length);
                dst.cloneRange(src, 0, 3 * 65536, 8 * BLOCK);
            }
            fx.fs.unlink("/src");
            fx.remount();
            byte[] expected = new byte[3 * 65536 + 8 * BLOCK];
            System.arraycopy(data, 0, expected, 0, data.length);
            System.arraycopy(data, 0, expected, 3 * 65536, 8 * BLOCK);
            assertThat(fx.readFile("/dst")).isEqualTo(expected);
            fx.unmountAndCheck();
            assertThat(Images.refcounts(fx.device)).containsExactly(
                    new RefcountMap.Record(firstDataBlock(fx), 8, 2));
            fx.mount();
            fx.fs.unlink("/dst");
            fx.unmountAndCheck();
            assertThat(Images.refcounts(fx.device)).isEmpty();
            fx.mount();
        }
    }

    @Test
    void cloneWithinOneFileAndOverwriteBoth() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            byte[] data = pattern(7, 0, 8 * BLOCK);
            byte[] expected = new byte[24 * BLOCK];
            try (IomapFile file = fx.write("/f", data)) {
                file.fsync();
                file.cloneRange(file, 0, 16 * BLOCK, 8 * BLOCK);
                byte[] a = pattern(8, 0, 100);
                byte[] b = pattern(9, 0, BLOCK * 2);
                XfsFixture.writeAt(file, 50, a);
                XfsFixture.writeAt(file, 17 * BLOCK, b);
                file.fsync();
                System.arraycopy(data, 0, expected, 0, data.length);
                System.arraycopy(data, 0, expected, 16 * BLOCK, data.length);
                System.arraycopy(a, 0, expected, 50, a.length);
                System.arraycopy(b, 0, expected, 17 * BLOCK, b.length);
                assertThat(XfsFixture.readAll(file)).isEqualTo(expected);
            }
            fx.remount();
            assertThat(fx.readFile("/f")).isEqualTo(expected);
        }
    }

    /** Files are placed in allocation group (inode number mod group count); /src is inode 2. */
    private static long firstDataBlock(XfsFixture fx) throws Exception {
        XfsGeometry geometry = Images.geometry(fx.device);
        int agno = 2 % geometry.agCount();
        return geometry.agStart(agno) + geometry.agHeaderBlocks(agno);
    }
}
