package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.device.ZoneCondition;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file device opened read-only, and a zoned device over one: reads work, every write, discard,
 * resize and zone operation is refused with {@link ReadOnlyDeviceException} before anything changes,
 * and closing writes nothing (a zoned device does not even repair a damaged copy of its zone state).
 */
class ReadOnlyDeviceTest {
    private static final int BLOCK = 4096;
    private static final long ZONE = 16L * BLOCK;
    private static final ZoneLayout LAYOUT = new ZoneLayout(ZONE, ZONE, 4, 1, 0);

    @TempDir
    Path dir;
    private final Random random = new Random(Long.getLong("iomap.test.seed", 0));

    @Test
    void aReadOnlyFileDeviceReadsAndRefusesEveryChange() throws Exception {
        Path image = dir.resolve("image");
        byte[] data = new byte[4 * BLOCK];
        random.nextBytes(data);
        try (var writer = FileBlockDevice.open(image, BLOCK, 8L * BLOCK, false)) {
            writer.write(BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA).get();
        }
        byte[] before = Files.readAllBytes(image);

        try (var device = FileBlockDevice.openReadOnly(image, BLOCK, false)) {
            assertThat(device.readOnly()).isTrue();
            assertThat(device.toString()).endsWith(", read-only]");
            assertThat(device.capacity()).isEqualTo(8L * BLOCK);
            ByteBuffer back = ByteBuffer.allocate(data.length);
            device.read(BLOCK, back);
            assertThat(back.array()).isEqualTo(data);

            var write = device.write(0, ByteBuffer.allocate(BLOCK), IoPurpose.METADATA);
            assertThatThrownBy(write::get).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(ReadOnlyDeviceException.class)
                    .hasMessage("write to " + image + " refused: the device is open read-only");
            assertThatThrownBy(() -> device.discard(0, BLOCK)).isInstanceOf(ReadOnlyDeviceException.class);
            assertThatThrownBy(() -> device.resize(BLOCK, 4L * BLOCK)).isInstanceOf(ReadOnlyDeviceException.class);
            device.flush();
            assertThat(device.stats().writes()).isZero();
            assertThat(device.stats().flushes()).isEqualTo(1);
        }
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
    }

    @Test
    void aZonedDeviceOverAReadOnlyFileIsReadOnlyAndNeverRepairsItsState() throws Exception {
        Path image = dir.resolve("zoned");
        byte[] data = new byte[3 * BLOCK];
        random.nextBytes(data);
        try (var zoned = ZonedDevice.create(FileBlockDevice.open(image, BLOCK, LAYOUT.backingBytes(BLOCK), false),
                LAYOUT)) {
            zoned.write(ZONE, ByteBuffer.wrap(data), IoPurpose.DATA).get();
        }
        damageSecondSlot(image);
        byte[] before = Files.readAllBytes(image);

        try (var zoned = ZonedDevice.open(FileBlockDevice.openReadOnly(image, BLOCK, false))) {
            assertThat(zoned.readOnly()).isTrue();
            assertThat(zoned.stateProblems()).hasSize(1);
            assertThat(zoned.zone(1).writePointer()).isEqualTo(ZONE + data.length);
            ByteBuffer back = ByteBuffer.allocate(data.length);
            zoned.read(ZONE, back);
            assertThat(back.array()).isEqualTo(data);

            var write = zoned.write(ZONE + data.length, ByteBuffer.allocate(BLOCK), IoPurpose.DATA);
            assertThatThrownBy(write::get).cause().isInstanceOf(ReadOnlyDeviceException.class);
            var append = zoned.append(2 * ZONE, List.of(ByteBuffer.allocate(BLOCK)), IoPurpose.DATA);
            assertThatThrownBy(append::get).cause().isInstanceOf(ReadOnlyDeviceException.class);
            assertThatThrownBy(() -> zoned.discard(0, BLOCK)).isInstanceOf(ReadOnlyDeviceException.class);
            assertThatThrownBy(() -> zoned.resetZone(ZONE)).isInstanceOf(ReadOnlyDeviceException.class);
            assertThatThrownBy(() -> zoned.finishZone(ZONE)).isInstanceOf(ReadOnlyDeviceException.class);
            assertThatThrownBy(() -> zoned.openZone(2 * ZONE)).isInstanceOf(ReadOnlyDeviceException.class);
            assertThatThrownBy(() -> zoned.failZone(2 * ZONE, ZoneCondition.OFFLINE))
                    .isInstanceOf(ReadOnlyDeviceException.class);
            assertThat(zoned.zone(1).writePointer()).as("nothing moved").isEqualTo(ZONE + data.length);
            zoned.flush();
        }
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();

        try (var zoned = ZonedDevice.open(FileBlockDevice.open(image, BLOCK, false))) {
            assertThat(zoned.stateProblems()).as("still damaged: only a writer repairs it").hasSize(1);
        }
    }

    /** Flips a byte inside the second copy of the zone state (its sequence number). */
    private static void damageSecondSlot(Path image) throws IOException {
        long slot1 = BLOCK + (long) ZoneStateTable.slotBytes(LAYOUT.zoneCount(), BLOCK);
        try (var channel = FileChannel.open(image, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            channel.read(b, slot1 + 8);
            b.put(0, (byte) (b.get(0) ^ 0x5a)).rewind();
            channel.write(b, slot1 + 8);
        }
    }
}
