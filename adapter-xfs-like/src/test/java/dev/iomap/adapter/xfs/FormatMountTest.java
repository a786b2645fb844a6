package dev.iomap.adapter.xfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapException;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FormatMountTest {

    @Test
    void thePluginContributesTheAdapter() {
        assertThat(IomapFileSystems.adapters()).contains("xfs-like");
        // Everything but journaled data and data checksums: xfs-like journals metadata only, as XFS.
        assertThat(new XfsLikeAdapter().capabilities())
                .isEqualTo(java.util.EnumSet.complementOf(java.util.EnumSet.of(Capability.JOURNALED_DATA,
                        Capability.DATA_CHECKSUMS, Capability.DENSE_FILES)));
    }

    @Test
    void aFreshFilesystemIsEmptyCleanAndCounted() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            assertThat(fx.fs.readdir("/")).isEmpty();
            FsStat stat = fx.fs.statfs();
            assertThat(stat.blockSize()).isEqualTo(4096);
            assertThat(stat.totalBlocks()).isEqualTo(16384);
            assertThat(stat.freeBlocks()).isBetween(14000L, 16384L);
            assertThat(stat.freeInodes()).isEqualTo(stat.totalInodes() - 1);
            assertThat(fx.fs.capabilities()).contains(Capability.CLONE, Capability.DURABLE_FSYNC);
        }
    }

    @Test
    void formatAndMountAreRepeatableAndFsckIsClean() throws Exception {
        try (RamBlockDevice device = new RamBlockDevice(4096, 16L << 20)) {
            for (int round = 0; round < 2; round++) {
                IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(4096));
                XfsFixture.assertClean(device);
                IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions()).close();
                XfsFixture.assertClean(device);
            }
        }
    }

    @Test
    void theLabelMkfsGaveIsReadAndASetLabelIsOnTheDeviceAtOnceAndAfterRemount() throws Exception {
        try (RamBlockDevice device = new RamBlockDevice(4096, 16L << 20)) {
            IomapFileSystems.format("xfs-like", device, new FormatOptions(4096, "scratch", Map.of()));
            try (var fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                assertThat(fs.label()).isEqualTo("scratch");
                long flushes = device.stats().flushes();
                fs.setLabel("backup-2026");
                assertThat(fs.label()).isEqualTo("backup-2026");
                assertThat(device.stats().flushes()).as("durable when setLabel returns").isGreaterThan(flushes);
                assertThat(XfsSuperblock.read(device).label()).isEqualTo("backup-2026");
                assertThat(XfsSuperblock.read(device).clean()).as("still mounted").isFalse();
                assertThatThrownBy(() -> fs.setLabel("x".repeat(33))).isInstanceOf(InvalidRangeException.class)
                        .hasMessageContaining("32 bytes");
                assertThatThrownBy(() -> fs.setLabel("a\0b")).isInstanceOf(InvalidRangeException.class)
                        .hasMessageContaining("NUL");
                assertThat(fs.label()).isEqualTo("backup-2026");
            }
            XfsFixture.assertClean(device);
            assertThat(XfsSuperblock.read(device).label()).isEqualTo("backup-2026");
            try (var fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                assertThat(fs.label()).isEqualTo("backup-2026");
                fs.setLabel("");
            }
            try (var fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                assertThat(fs.label()).isEmpty();
            }
        }
    }

    @Test
    void formatRefusesWhatItCannotDo() throws Exception {
        try (RamBlockDevice device = new RamBlockDevice(4096, 16L << 20);
                RamBlockDevice tiny = new RamBlockDevice(4096, 64 * 4096)) {
            XfsLikeAdapter adapter = new XfsLikeAdapter();
            assertThatThrownBy(() -> adapter.format(device, FormatOptions.blockSize(1024)))
                    .isInstanceOf(InvalidRangeException.class).hasMessageContaining("device's block size");
            assertThatThrownBy(() -> adapter.format(device, new FormatOptions(4096, "", Map.of("colour", "red"))))
                    .isInstanceOf(IomapException.class).hasMessageContaining("unknown format property 'colour'");
            assertThatThrownBy(() -> adapter.format(tiny, FormatOptions.blockSize(4096)))
                    .isInstanceOf(InvalidRangeException.class).hasMessageContaining("at least 256 blocks");
        }
    }

    @Test
    void formatPropertiesShapeTheImage() throws Exception {
        try (XfsFixture fx = XfsFixture.create(32L << 20, Map.of("agcount", "2", "inodes", "100",
                "journalblocks", "200"))) {
            assertThat(fx.fs.statfs().totalInodes()).isBetween(100L, 120L);
            fx.write("/f", TestData.pattern(3, 0, 5000)).close();
            fx.remount();
            assertThat(fx.readFile("/f")).isEqualTo(TestData.pattern(3, 0, 5000));
        }
    }

    @Test
    void smallBlocksWork() throws Exception {
        try (RamBlockDevice device = new RamBlockDevice(512, 8L << 20)) {
            IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(512));
            byte[] data = TestData.pattern(9, 0, 100_000);
            try (var fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                fs.mkdir("/d");
                try (var file = fs.create("/d/f")) {
                    XfsFixture.writeAt(file, 0, data);
                    XfsFixture.writeAt(file, 300_000, data);
                    file.fsync();
                }
            }
            XfsFixture.assertClean(device);
            try (var fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions());
                    var file = fs.open("/d/f")) {
                assertThat(XfsFixture.read(file, 0, 100_000)).isEqualTo(data);
                assertThat(XfsFixture.read(file, 100_000, 200_000)).containsOnly(0);
                assertThat(XfsFixture.read(file, 300_000, 100_000)).isEqualTo(data);
            }
            XfsFixture.assertClean(device);
        }
    }

    @Test
    void fourKilobyteBlocksOnFiveHundredTwelveByteSectors() throws Exception {
        try (RamBlockDevice device = new RamBlockDevice(512, 16L << 20)) {
            IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(4096));
            byte[] data = TestData.pattern(4, 0, 123_457);
            try (var fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions());
                    var file = fs.create("/f")) {
                assertThat(fs.statfs().blockSize()).isEqualTo(4096);
                XfsFixture.writeAt(file, 0, data);
                file.fsync();
            }
            XfsFixture.assertClean(device);
            try (var fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                assertThat(XfsFixture.readFile(fs, "/f")).isEqualTo(data);
                assertThat(fs.stat("/f").allocatedBytes()).isEqualTo(31 * 4096);
            }
            XfsFixture.assertClean(device);
        }
    }

    @Test
    void anEmptyDeviceIsNotAnImage() throws Exception {
        try (RamBlockDevice device = new RamBlockDevice(4096, 16L << 20)) {
            assertThatThrownBy(() -> new XfsLikeAdapter().mount(device, XfsFixture.mountOptions()))
                    .isInstanceOf(CorruptFileSystemException.class)
                    .hasMessageContaining("not a xfs-like image").hasMessageContaining("device offset 0");
            assertThat(new XfsLikeAdapter().fsck(device).problems()).singleElement().asString()
                    .contains("not a xfs-like image");
        }
    }
}
