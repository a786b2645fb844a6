package dev.iomap.adapter.zonefs;

import static dev.iomap.adapter.zonefs.ZonefsFixture.LAYOUT;
import static dev.iomap.adapter.zonefs.ZonefsFixture.SECTOR;
import static dev.iomap.adapter.zonefs.ZonefsFixture.SEQ_CAPACITY;
import static dev.iomap.adapter.zonefs.ZonefsFixture.ZONE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.WritebackException;
import dev.iomap.device.Zone;
import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZoneViolationException;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.ZonedDevice;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sequential zone files: append-only at the size, which is the zone's write pointer on the device;
 * every other write, hole, fallocate, clone and truncate but to 0 or the capacity refused with a
 * typed error that changes nothing.
 */
class SequentialFileTest {
    /** /seq/1 is zone 4: zone 0 holds the superblock, zones 1 and 2 are /cnv/0 and /cnv/1. */
    static final int ZONE_INDEX = 4;
    private final Random random = new Random(ZonefsFixture.SEED);

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void bufferedAppendsReachTheZoneAtFsyncAndTheSizeIsTheWritePointer(int blockSize) throws Exception {
        var expected = new ByteArrayOutputStream();
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(blockSize)) {
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                for (int i = 0; i < 7; i++) {
                    int blocks = 1 + random.nextInt(5 * 1024 / blockSize);
                    byte[] chunk = ZonefsFixture.randomBytes(random, blockSize * blocks);
                    ZonefsFixture.write(file, file.size(), chunk);
                    expected.writeBytes(chunk);
                }
                // Buffered: nothing reached the zone yet, so its write pointer has not moved.
                assertThat(device.zone(ZONE_INDEX).writePointer()).isEqualTo(ZONE_INDEX * ZONE);
                assertThat(file.size()).isEqualTo(expected.size());

                file.fsync();

                Zone zone = device.zone(ZONE_INDEX);
                assertThat(zone.writtenBytes()).isEqualTo(expected.size());
                assertThat(ZonefsFixture.readAll(file)).isEqualTo(expected.toByteArray());
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                assertThat(file.size()).isEqualTo(device.zone(ZONE_INDEX).writtenBytes()).isEqualTo(expected.size());
                assertThat(ZonefsFixture.readAll(file)).isEqualTo(expected.toByteArray());
                assertThat(fs.stat("/seq/0").size()).isZero();
            }
        }
    }

    /** The device's own error, behind the filesystem's back: the zone takes writes only at its write pointer. */
    @Test
    void theDeviceRefusesAWriteBesideTheWritePointerOfAFileZone() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096)) {
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                ZonefsFixture.write(file, 0, new byte[8192]);
                file.fsync();
            }
            long wp = device.zone(ZONE_INDEX).writePointer();

            var ahead = device.write(wp + 4096, ByteBuffer.allocate(4096), IoPurpose.DATA);
            var behind = device.write(wp - 4096, ByteBuffer.allocate(4096), IoPurpose.DATA);

            for (var refused : java.util.List.of(ahead, behind)) {
                assertThatThrownBy(refused::join).isInstanceOf(CompletionException.class)
                        .cause().isInstanceOfSatisfying(ZoneViolationException.class, e -> assertThat(e.reason())
                                .isEqualTo(ZoneViolationException.Reason.NOT_AT_WRITE_POINTER));
            }
            assertThat(device.zone(ZONE_INDEX).writePointer()).isEqualTo(wp);
        }
    }

    /** Each refusal of a sequential file, proved, and proved to change nothing (dirty data included). */
    @Test
    void refusesEveryWriteThatIsNotAnAppendOfWholeBlocks() throws Exception {
        byte[] data = ZonefsFixture.randomBytes(random, 3 * 4096);
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096);
                IomapFileSystem fs = ZonefsFixture.mount(device);
                IomapFile file = fs.open("/seq/1");
                IomapFile other = fs.open("/seq/2")) {
            ZonefsFixture.write(file, 0, Arrays.copyOf(data, 2 * 4096));
            file.fsync();
            ZonefsFixture.write(file, 2 * 4096, Arrays.copyOfRange(data, 2 * 4096, 3 * 4096));

            assertThatThrownBy(() -> file.write(4096, ByteBuffer.allocate(4096)))
                    .isInstanceOf(SequentialFileException.class).hasMessageContaining("append-only");
            assertThatThrownBy(() -> file.write(0, ByteBuffer.allocate(10)))
                    .isInstanceOf(SequentialFileException.class).hasMessageContaining("overwrite");
            assertThatThrownBy(() -> file.write(5 * 4096, ByteBuffer.allocate(4096)))
                    .isInstanceOf(SequentialFileException.class).hasMessageContaining("hole");
            assertThatThrownBy(() -> file.write(3 * 4096, ByteBuffer.allocate(100)))
                    .isInstanceOf(InvalidRangeException.class).hasMessageContaining("whole number");
            assertThatThrownBy(() -> file.write(3 * 4096, ByteBuffer.allocate((int) SEQ_CAPACITY)))
                    .isInstanceOf(InvalidRangeException.class).hasMessageContaining("capacity");
            for (FallocateMode mode : FallocateMode.values()) {
                assertThatThrownBy(() -> file.fallocate(mode, 0, 4096, true)).isInstanceOf(NotSupportedException.class);
                assertThatThrownBy(() -> file.fallocate(mode, 3 * 4096, 4096, false))
                        .isInstanceOf(NotSupportedException.class);
            }
            assertThatThrownBy(() -> other.cloneRange(file, 0, 0, 4096)).isInstanceOf(NotSupportedException.class);
            assertThatThrownBy(() -> file.map().store(0, ByteBuffer.allocate(8)))
                    .isInstanceOf(SequentialFileException.class).hasMessageContaining("shared mapping");
            assertThatThrownBy(() -> file.truncate(4096)).isInstanceOf(SequentialFileException.class)
                    .hasMessageContaining("only to 0");
            assertThatThrownBy(() -> file.truncate(4 * 4096)).isInstanceOf(SequentialFileException.class);
            assertThatThrownBy(() -> file.truncate(100)).isInstanceOf(SequentialFileException.class);

            assertThat(file.size()).isEqualTo(data.length);
            assertThat(ZonefsFixture.readAll(file)).isEqualTo(data);
            file.fsync();
            assertThat(device.zone(ZONE_INDEX).writtenBytes()).isEqualTo(data.length);
            assertThat(other.size()).isZero();
        }
    }

    @Test
    void truncateToZeroResetsTheZone() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096)) {
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                ZonefsFixture.write(file, 0, ZonefsFixture.randomBytes(random, 4 * 4096));
                file.fsync();
                ZonefsFixture.write(file, 4 * 4096, ZonefsFixture.randomBytes(random, 4096));

                file.truncate(0);

                assertThat(file.size()).isZero();
                assertThat(device.zone(ZONE_INDEX).condition()).isEqualTo(ZoneCondition.EMPTY);
                assertThat(file.read(0, ByteBuffer.allocate(10))).isEqualTo(-1);
                byte[] again = ZonefsFixture.randomBytes(random, 2 * 4096);
                ZonefsFixture.write(file, 0, again);
                file.fsync();
                assertThat(ZonefsFixture.readAll(file)).isEqualTo(again);
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                assertThat(file.size()).isEqualTo(2 * 4096);
            }
        }
    }

    @Test
    void truncateToTheCapacityFinishesTheZoneAfterWritingBackWhatIsDirty() throws Exception {
        byte[] data = ZonefsFixture.randomBytes(random, 3 * 4096);
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096)) {
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                ZonefsFixture.write(file, 0, data);

                file.truncate(SEQ_CAPACITY);

                assertThat(file.size()).isEqualTo(SEQ_CAPACITY);
                Zone zone = device.zone(ZONE_INDEX);
                assertThat(zone.condition()).isEqualTo(ZoneCondition.FULL);
                assertThat(zone.writePointer()).isEqualTo(zone.capacityEnd());
                assertThat(ZonefsFixture.read(file, 0, data.length)).isEqualTo(data);
                assertThat(ZonefsFixture.read(file, data.length, (int) SEQ_CAPACITY - data.length)).containsOnly(0);
                assertThatThrownBy(() -> file.write(SEQ_CAPACITY, ByteBuffer.allocate(4096)))
                        .isInstanceOf(InvalidRangeException.class);
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                assertThat(file.size()).isEqualTo(SEQ_CAPACITY);
                assertThat(ZonefsFixture.read(file, 0, data.length)).isEqualTo(data);
            }
        }
    }

    /**
     * A write the device loses: fsync reports it, and the file's size falls back to the zone's write
     * pointer (zonefs' resynchronisation), from where appends go on.
     */
    @Test
    void aWriteErrorResynchronisesTheSizeFromTheWritePointerAndFailsFsync() throws Exception {
        var faults = new FaultInjectingDevice(new RamBlockDevice(SECTOR, LAYOUT.backingBytes(SECTOR)));
        long dataStart = LAYOUT.backingBytes(SECTOR) - LAYOUT.zonedBytes();
        try (ZonedDevice device = ZonedDevice.create(faults, LAYOUT)) {
            ZonefsFixture.format(device, 4096);
            byte[] kept = ZonefsFixture.randomBytes(random, 2 * 4096);
            byte[] resumed = ZonefsFixture.randomBytes(random, 4096);
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                ZonefsFixture.write(file, 0, kept);
                file.fsync();
                faults.inject(Fault.writes(dataStart + ZONE_INDEX * ZONE, ZONE).purpose(IoPurpose.DATA).times(1));
                ZonefsFixture.write(file, kept.length, new byte[3 * 4096]);
                assertThat(file.size()).isEqualTo(5 * 4096);

                assertThatThrownBy(file::fsync).isInstanceOf(WritebackException.class);

                assertThat(file.size()).isEqualTo(kept.length);
                assertThat(fs.stat("/seq/1").size()).isEqualTo(kept.length);
                assertThat(device.zone(ZONE_INDEX).writtenBytes()).isEqualTo(kept.length);
                ZonefsFixture.write(file, kept.length, resumed);
                file.fsync();
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                byte[] all = ZonefsFixture.readAll(file);
                assertThat(all).hasSize(3 * 4096).startsWith(kept);
                assertThat(Arrays.copyOfRange(all, kept.length, all.length)).isEqualTo(resumed);
            }
        }
    }
}
