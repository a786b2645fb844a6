package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@link BlockDeviceContractTest} again over a file, whose writes complete on two threads in any
 * order: conventional zones pass them straight through.
 */
class ZonedConventionalFileContractTest extends BlockDeviceContractTest {
    @TempDir
    Path dir;

    @Override
    protected BlockDevice open(int blockSize, long capacity) throws IOException {
        ZoneLayout layout = new ZoneLayout(capacity / 4, capacity / 4, 4, 4, 0);
        FileBlockDevice file = FileBlockDevice.open(dir.resolve("zoned.img"), blockSize,
                layout.backingBytes(blockSize), false);
        return ZonedDevice.create(file, layout);
    }
}
