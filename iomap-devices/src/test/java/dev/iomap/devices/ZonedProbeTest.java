package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ZonedDevice#holdsZones} and {@link ZonedDevice#probe}: a zoned image made with 4 KiB blocks
 * is found through a 512-byte device (as {@code mkfs} holds an image to look at it), read-only,
 * without taking the device over or changing a byte.
 */
class ZonedProbeTest {
    private static final int BLOCK = 4096;
    private static final long ZONE = 16L * BLOCK;
    private static final ZoneLayout LAYOUT = new ZoneLayout(ZONE, ZONE, 4, 1, 0);

    @TempDir
    Path dir;

    @Test
    void aZonedImageIsFoundThroughSmallerBlocksReadOnly() throws Exception {
        Path image = dir.resolve("zoned");
        try (var zoned = ZonedDevice.create(FileBlockDevice.open(image, BLOCK, LAYOUT.backingBytes(BLOCK), false),
                LAYOUT)) {
            zoned.write(2 * ZONE, ByteBuffer.allocate(2 * BLOCK), IoPurpose.DATA).get();
        }
        byte[] before = Files.readAllBytes(image);

        try (var probing = FileBlockDevice.open(image, 512, false)) {
            assertThat(ZonedDevice.holdsZones(probing)).isTrue();
            try (ZonedDevice zoned = ZonedDevice.probe(probing).orElseThrow()) {
                assertThat(zoned.readOnly()).isTrue();
                assertThat(zoned.blockSize()).isEqualTo(BLOCK);
                assertThat(zoned.layout()).isEqualTo(LAYOUT);
                assertThat(zoned.zone(2).writePointer()).isEqualTo(2 * ZONE + 2 * BLOCK);
                assertThatThrownBy(() -> zoned.resetZone(2 * ZONE)).isInstanceOf(ReadOnlyDeviceException.class);
            }
            ByteBuffer first = ByteBuffer.allocate(512);
            probing.read(0, first);
            assertThat(first.array()).as("still open after the probe closed").startsWith("IOMAPZNG".getBytes(StandardCharsets.US_ASCII));
        }
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
    }

    @Test
    void anImageWithoutZonesIsNotFound() throws Exception {
        try (var plain = new RamBlockDevice(512, 64 * 512)) {
            assertThat(ZonedDevice.holdsZones(plain)).isFalse();
            assertThat(ZonedDevice.probe(plain)).isEmpty();
        }
    }

    @Test
    void aZonedImageOfSmallerBlocksThanTheProbeIsNamed() throws Exception {
        try (var backing = new RamBlockDevice(512, LAYOUT.backingBytes(512))) {
            ZonedDevice.create(new ForwardingBlockDevice(backing) {
                @Override
                public void close() {
                    // keep the RAM device open for the probe
                }
            }, LAYOUT).close();
            var copy = backing.copy();
            try (var large = new ReadOnlyView(copy, BLOCK)) {
                assertThat(ZonedDevice.holdsZones(large)).isTrue();
                assertThatThrownBy(() -> ZonedDevice.probe(large)).isInstanceOf(CorruptFileSystemException.class)
                        .hasMessageContaining("has 512-byte blocks");
            }
        }
    }
}
