package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole {@link BlockDeviceContractTest} on an overlay over RAM; then that the base is never
 * written, even a read-only file, and that reads mix the overlay's blocks with the base's.
 */
class OverlayDeviceTest extends BlockDeviceContractTest {
    @TempDir
    Path dir;

    @Override
    protected BlockDevice open(int blockSize, long capacity) {
        return new OverlayDevice(new RamBlockDevice(blockSize, capacity));
    }

    @Test
    void writesStayInMemoryOverAReadOnlyImage() throws Exception {
        Path image = dir.resolve("image");
        byte[] base = randomBytes(8 * BLOCK);
        try (var writer = FileBlockDevice.open(image, BLOCK, base.length, false)) {
            writer.write(0, ByteBuffer.wrap(base), IoPurpose.DATA).get();
        }
        byte[] before = Files.readAllBytes(image);
        byte[] mine = randomBytes(2 * BLOCK);

        try (var overlay = new OverlayDevice(FileBlockDevice.openReadOnly(image, BLOCK, false))) {
            overlay.write(3 * BLOCK, List.of(ByteBuffer.wrap(mine, 0, 100), ByteBuffer.wrap(mine, 100, mine.length - 100)),
                    IoPurpose.METADATA).get();
            overlay.discard(6 * BLOCK, BLOCK);
            overlay.flush();

            ByteBuffer back = ByteBuffer.allocate(base.length);
            overlay.read(0, back);
            byte[] expected = base.clone();
            System.arraycopy(mine, 0, expected, 3 * BLOCK, mine.length);
            Arrays.fill(expected, 6 * BLOCK, 7 * BLOCK, (byte) 0);
            assertThat(back.array()).isEqualTo(expected);
            assertThat(overlay.stats().metadataBytesWritten()).isEqualTo(mine.length);
        }
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
    }
}
