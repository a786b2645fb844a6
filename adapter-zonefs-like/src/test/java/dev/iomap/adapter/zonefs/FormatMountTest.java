package dev.iomap.adapter.zonefs;

import static dev.iomap.adapter.zonefs.ZonefsFixture.LAYOUT;
import static dev.iomap.adapter.zonefs.ZonefsFixture.SECTOR;
import static dev.iomap.adapter.zonefs.ZonefsFixture.SEQ_CAPACITY;
import static dev.iomap.adapter.zonefs.ZonefsFixture.ZONE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.UnrepresentableNameException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.ZoneCondition;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** mkfs, mount and the fixed namespace the zone report gives. */
class FormatMountTest {

    @Test
    void thePluginIsFoundByName() {
        assertThat(IomapFileSystems.adapters()).contains(ZonefsLikeAdapter.NAME);
    }

    @Test
    void declaresWhatItDoesAndNothingElse() {
        assertThat(new ZonefsLikeAdapter().capabilities())
                .containsExactlyInAnyOrder(Capability.RANDOM_WRITE, Capability.TRUNCATE, Capability.DURABLE_FSYNC,
                        Capability.DIRECT_IO);
    }

    @Test
    void mkfsNeedsAZonedDevice() throws Exception {
        try (RamBlockDevice plain = new RamBlockDevice(SECTOR, 1 << 20)) {
            assertThatThrownBy(() -> ZonefsFixture.format(plain, 4096)).isInstanceOf(NotSupportedException.class)
                    .hasMessageContaining("needs a zoned device");
            assertThatThrownBy(() -> ZonefsFixture.mount(plain)).isInstanceOf(NotSupportedException.class);
        }
    }

    @Test
    void mkfsRefusesWhatDoesNotFit() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newDevice(LAYOUT);
                ZonedDevice single = ZonefsFixture.newDevice(new ZoneLayout(ZONE, ZONE, 1, 1, 0));
                ZonedDevice oddCapacity = ZonefsFixture.newDevice(new ZoneLayout(ZONE, 3 * 512, 4, 1, 0))) {
            assertThatThrownBy(() -> IomapFileSystems.format(ZonefsLikeAdapter.NAME, device,
                    new FormatOptions(4096, "", Map.of("agcount", "4")))).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("no format properties");
            assertThatThrownBy(() -> ZonefsFixture.format(single, 4096)).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("at least two zones");
            assertThatThrownBy(() -> ZonefsFixture.format(oddCapacity, 1024)).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("not a whole number of 1024-byte blocks");
        }
    }

    /**
     * Issue 36, item 8: mkfs resets the sequential zones by recording them empty, in one zone state
     * write, and writes nothing over them (it wrote zeroes over every zone: 300 s for a terabyte). Over
     * a thousand sequential zones, formerly full of data, only the conventional zone is zeroed, and the
     * zones read as zeroes after it.
     */
    @Test
    void mkfsWritesNothingOverTheSequentialZones() throws Exception {
        ZoneLayout layout = new ZoneLayout(ZONE, ZONE, 1025, 1, 0);
        CountingDevice backing = new CountingDevice(new RamBlockDevice(SECTOR, layout.backingBytes(SECTOR)));
        try (ZonedDevice device = ZonedDevice.create(backing, layout)) {
            byte[] old = new byte[(int) ZONE];
            Arrays.fill(old, (byte) 0x5a);
            for (int zone = 1; zone < layout.zoneCount(); zone++) {
                device.write(zone * ZONE, java.nio.ByteBuffer.wrap(old), dev.iomap.device.IoPurpose.DATA).join();
            }
            device.flush();
            DeviceStats before = backing.stats();

            ZonefsFixture.format(device, 4096);

            DeviceStats format = backing.stats().minus(before);
            assertThat(format.discardedBytes()).as("bytes zeroed: the conventional zone 0 only").isEqualTo(ZONE);
            assertThat(format.dataBytesWritten() + format.metadataBytesWritten())
                    .as("bytes written: the superblock and the zone state, not the zones")
                    .isLessThan(ZONE);
            for (int zone = 1; zone < layout.zoneCount(); zone++) {
                assertThat(device.zone(zone).condition()).isEqualTo(ZoneCondition.EMPTY);
            }
            java.nio.ByteBuffer last = java.nio.ByteBuffer.allocate((int) ZONE);
            device.read((layout.zoneCount() - 1) * ZONE, last);
            assertThat(last.array()).containsOnly(0);
            try (IomapFileSystem fs = ZonefsFixture.mount(device)) {
                assertThat(fs.readdir("/seq")).hasSize(1024);
            }
        }
    }

    @Test
    void oneFilePerZoneAfterZoneZero() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096);
                IomapFileSystem fs = ZonefsFixture.mount(device)) {
            assertThat(fs.readdir("/")).extracting(DirEntry::name, DirEntry::type)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("cnv", FileType.DIRECTORY),
                            org.assertj.core.groups.Tuple.tuple("seq", FileType.DIRECTORY));
            assertThat(fs.readdir("/cnv")).extracting(DirEntry::name).containsExactly("0", "1");
            assertThat(fs.readdir("/seq")).extracting(DirEntry::name).containsExactly("0", "1", "2", "3", "4");
            assertThat(fs.stat("/cnv/0").size()).isEqualTo(ZONE);
            assertThat(fs.stat("/cnv/1").ino()).isEqualTo(2);
            assertThat(fs.stat("/seq/0").size()).isZero();
            assertThat(fs.stat("/seq/4").ino()).isEqualTo(7);
            assertThat(fs.stat("/seq").isDirectory()).isTrue();
            FsStat statfs = fs.statfs();
            assertThat(statfs.totalBlocks()).isEqualTo((2 * ZONE + 5 * SEQ_CAPACITY) / 4096);
            assertThat(statfs.freeBlocks()).isEqualTo(5 * SEQ_CAPACITY / 4096);
            assertThatThrownBy(() -> fs.stat("/seq/5")).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> fs.stat("/seq/00")).isInstanceOf(NoSuchFileException.class);
        }
        try (ZonedDevice small = ZonefsFixture.newFormattedDevice(1024)) {
            assertThat(IomapFileSystems.fsck(ZonefsLikeAdapter.NAME, small).isClean()).isTrue();
        }
    }

    /** Each refusal of the fixed namespace, proved: nothing can be created, removed or renamed. */
    @Test
    void theNamespaceCannotChange() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096);
                IomapFileSystem fs = ZonefsFixture.mount(device)) {
            assertThatThrownBy(() -> fs.create("/seq/9")).isInstanceOf(NotSupportedException.class)
                    .hasMessageContaining("one file per zone");
            assertThatThrownBy(() -> fs.create("/seq/0")).isInstanceOf(FileAlreadyExistsException.class);
            assertThatThrownBy(() -> fs.mkdir("/more")).isInstanceOf(NotSupportedException.class)
                    .hasMessageContaining("DIRECTORIES");
            assertThatThrownBy(() -> fs.unlink("/cnv/0")).isInstanceOf(NotSupportedException.class)
                    .hasMessageContaining("cannot be removed");
            assertThatThrownBy(() -> fs.unlink("/cnv/7")).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> fs.rmdir("/cnv")).isInstanceOf(NotSupportedException.class);
            assertThatThrownBy(() -> fs.rename("/seq/0", "/seq/x")).isInstanceOf(NotSupportedException.class);
            assertThat(fs.readdir("/seq")).hasSize(5);
        }
    }

    /** Names are byte strings: any other one is absent, looked up as it is, never decoded to a zone's name. */
    @Test
    void byteNamesThatAreNoZoneFileAreAbsent() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096);
                IomapFileSystem fs = ZonefsFixture.mount(device)) {
            // bytes 30 80 ("0" and a byte that is not UTF-8), fullwidth zero, "0" with an escaped
            // C3 A9 that would spell an e-acute, a 255-byte name of escaped bytes
            String escaped255 = FileNames.decode(filled(255, 0xb0));
            for (String name : List.of(FileNames.decode(new byte[] {'0', (byte) 0x80}), "\uFF10",
                    "0\u00e9", escaped255)) {
                assertThatThrownBy(() -> fs.stat("/seq/" + name)).as(name).isInstanceOf(NoSuchFileException.class);
                assertThatThrownBy(() -> fs.open("/cnv/" + name)).as(name).isInstanceOf(NoSuchFileException.class);
                assertThatThrownBy(() -> fs.create("/seq/" + name)).as(name).isInstanceOf(NotSupportedException.class);
            }
            assertThatThrownBy(() -> fs.stat("/seq/0\uDCC3\uDCA9")).isInstanceOf(UnrepresentableNameException.class);
            assertThatThrownBy(() -> fs.stat("/seq/" + FileNames.decode(filled(256, 0xb0))))
                    .hasMessageContaining("name longer than 255 bytes");
            assertThat(fs.readdir("/seq")).extracting(DirEntry::name).containsExactly("0", "1", "2", "3", "4");
        }
    }

    private static byte[] filled(int length, int value) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) value);
        return bytes;
    }

    @Test
    void aZoneLayoutWithoutConventionalZonesKeepsTheSuperblockInAFinishedZone() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newDevice(new ZoneLayout(ZONE, SEQ_CAPACITY, 4, 0, 2))) {
            ZonefsFixture.format(device, 1024);
            assertThat(device.zone(0).condition()).isEqualTo(ZoneCondition.FULL);
            try (IomapFileSystem fs = ZonefsFixture.mount(device)) {
                assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("seq");
                assertThat(fs.readdir("/seq")).extracting(DirEntry::name).containsExactly("0", "1", "2");
            }
            assertThat(IomapFileSystems.fsck(ZonefsLikeAdapter.NAME, device).problems()).isEmpty();
        }
    }

    @Test
    void mountRefusesADeviceWhoseZonesChanged() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096)) {
            var otherLayout = new ZoneLayout(ZONE, SEQ_CAPACITY, 8, 2, 3);
            var reformatted = ZonedDevice.create(new RamBlockDevice(SECTOR, otherLayout.backingBytes(SECTOR)),
                    otherLayout);
            byte[] superblock = new byte[SECTOR];
            device.read(0, java.nio.ByteBuffer.wrap(superblock));
            reformatted.write(0, java.nio.ByteBuffer.wrap(superblock), dev.iomap.device.IoPurpose.METADATA).join();

            assertThatThrownBy(() -> ZonefsFixture.mount(reformatted)).isInstanceOf(CorruptFileSystemException.class)
                    .hasMessageContaining("not the ones mkfs found");
            assertThat(IomapFileSystems.fsck(ZonefsLikeAdapter.NAME, reformatted).isClean()).isFalse();
            reformatted.close();
        }
    }

    @Test
    void mountRefusesWholeFolioWritebackOverSequentialZones() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096)) {
            PageCacheOptions wholeFolios = ZonefsFixture.cacheOptions().toBuilder().perBlockDirty(false).build();

            assertThatThrownBy(() -> ZonefsFixture.mount(device, wholeFolios, false))
                    .isInstanceOf(NotSupportedException.class).hasMessageContaining("per-block dirty tracking off");
            try (IomapFileSystem fs = ZonefsFixture.mount(device, wholeFolios.toBuilder().maxFolioOrder(0).build(),
                    false)) {
                assertThat(fs.readdir("/seq")).hasSize(5);
            }
        }
    }

    @Test
    void aFailedZoneIsReportedByFsck() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096)) {
            device.failZone(5 * ZONE, ZoneCondition.OFFLINE);

            List<String> problems = IomapFileSystems.fsck(ZonefsLikeAdapter.NAME, device).problems();

            assertThat(problems).singleElement().asString().contains("zone 5 is OFFLINE");
        }
    }

    /** Forged but checksum-valid: file counts or zone size that the zones do not make. */
    @Test
    void fsckAndMountRefuseFileCountsTheZonesDoNotMake() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096)) {
            ZonefsSuperblock real = ZonefsSuperblock.read(device);
            new ZonefsSuperblock(real.blockSize(), real.zoneCount(), real.zoneSize(), real.conventionalFiles() + 1,
                    real.sequentialFiles() - 1, real.layoutDigest(), real.formattedMillis(), real.label())
                    .write(device);

            assertThat(IomapFileSystems.fsck(ZonefsLikeAdapter.NAME, device).problems()).singleElement().asString()
                    .contains("3 conventional and 4 sequential files").contains("the zones make 2 and 5");
            assertThatThrownBy(() -> ZonefsFixture.mount(device)).isInstanceOf(CorruptFileSystemException.class)
                    .hasMessageContaining("sequential files");
        }
    }
}
