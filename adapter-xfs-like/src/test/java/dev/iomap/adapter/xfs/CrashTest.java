package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import java.nio.file.NoSuchFileException;
import org.junit.jupiter.api.Test;

/**
 * Power cuts: the RAM device holds exactly what flushes made durable (it completes writes at once), so
 * a copy of it taken without unmounting is the image a crash leaves.
 */
class CrashTest {

    private static IomapFileSystem mountCopy(BlockDevice copy) throws Exception {
        return IomapFileSystems.mount("xfs-like", copy, XfsFixture.mountOptions());
    }

    @Test
    void fsyncedDataAndNamesSurviveACrash() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.mkdir("/d");
            try (IomapFile a = fx.write("/a", pattern(1, 0, 123_456));
                    IomapFile b = fx.write("/d/b", pattern(2, 0, 77))) {
                a.fsync();
                b.fsync();
            }
            fx.fs.rename("/a", "/d/renamed");
            try (IomapFile c = fx.write("/c", pattern(3, 0, 5000))) {
                c.fsync();
            }
            BlockDevice copy = fx.copyOfDevice();
            assertThat(IomapFileSystems.fsck("xfs-like", copy).problems())
                    .anySatisfy(p -> assertThat(p).contains("not cleanly unmounted"));
            try (IomapFileSystem crashed = mountCopy(copy)) {
                assertThat(crashed.readdir("/d")).extracting(DirEntry::name).containsExactly("b", "renamed");
                try (IomapFile a = crashed.open("/d/renamed"); IomapFile b = crashed.open("/d/b");
                        IomapFile c = crashed.open("/c")) {
                    assertThat(XfsFixture.readAll(a)).isEqualTo(pattern(1, 0, 123_456));
                    assertThat(XfsFixture.readAll(b)).isEqualTo(pattern(2, 0, 77));
                    assertThat(XfsFixture.readAll(c)).isEqualTo(pattern(3, 0, 5000));
                }
            }
            XfsFixture.assertClean(copy);
        }
    }

    @Test
    void whatWasNotFsyncedMayBeLostButTheImageStaysConsistent() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            try (IomapFile a = fx.write("/a", pattern(4, 0, 50_000))) {
                a.fsync();
                XfsFixture.writeAt(a, 50_000, pattern(5, 0, 70_000));
                a.fallocate(FallocateMode.ALLOCATE, 0, 1 << 20, true);
            }
            fx.write("/unsynced", pattern(6, 0, 9000)).close();
            fx.fs.unlink("/a");
            BlockDevice copy = fx.copyOfDevice();
            try (IomapFileSystem crashed = mountCopy(copy); IomapFile a = crashed.open("/a")) {
                assertThat(XfsFixture.readAll(a)).isEqualTo(pattern(4, 0, 50_000));
                assertThatThrownBy(() -> crashed.open("/unsynced")).isInstanceOf(NoSuchFileException.class);
            }
            XfsFixture.assertClean(copy);
        }
    }

    @Test
    void aCrashAfterWritebackButBeforeFsyncNeverShowsStaleBlocks() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            try (IomapFile old = fx.write("/old", pattern(7, 0, 400_000))) {
                old.fsync();
            }
            fx.fs.unlink("/old");
            try (IomapFile f = fx.write("/f", pattern(8, 0, 10))) {
                f.fsync();
                XfsFixture.writeAt(f, 10, pattern(9, 0, 300_000));
                fx.fs.sync();
                XfsFixture.writeAt(f, 300_010, pattern(10, 0, 300_000));
            }
            BlockDevice copy = fx.copyOfDevice();
            try (IomapFileSystem crashed = mountCopy(copy); IomapFile f = crashed.open("/f")) {
                byte[] read = XfsFixture.readAll(f);
                assertThat(read.length).isIn(10, 300_010);
                assertThat(java.util.Arrays.copyOf(read, 10)).isEqualTo(pattern(8, 0, 10));
                if (read.length > 10) {
                    assertThat(java.util.Arrays.copyOfRange(read, 10, read.length)).isEqualTo(pattern(9, 0, 300_000));
                }
            }
            XfsFixture.assertClean(copy);
        }
    }

    @Test
    void anUnlinkedOpenFileLeftByACrashIsFreedAtMount() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            long free = fx.fs.statfs().freeBlocks();
            try (IomapFile open = fx.write("/tmp", pattern(11, 0, 100_000))) {
                open.fsync();
                fx.fs.unlink("/tmp");
                fx.fs.sync();
                BlockDevice copy = fx.copyOfDevice();
                try (IomapFileSystem crashed = mountCopy(copy)) {
                    assertThat(crashed.readdir("/")).isEmpty();
                    assertThat(crashed.statfs().freeBlocks()).isEqualTo(free);
                }
                XfsFixture.assertClean(copy);
                assertThat(XfsFixture.readAll(open)).isEqualTo(pattern(11, 0, 100_000));
            }
        }
    }
}
