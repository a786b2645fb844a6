package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import java.io.IOException;

/**
 * A zoned device whose zones are all conventional is an ordinary block device: the whole
 * {@link BlockDeviceContractTest}, over RAM, four zones.
 */
class ZonedConventionalRamContractTest extends BlockDeviceContractTest {

    @Override
    protected BlockDevice open(int blockSize, long capacity) throws IOException {
        ZoneLayout layout = new ZoneLayout(capacity / 4, capacity / 4, 4, 4, 0);
        return ZonedDevice.create(new RamBlockDevice(blockSize, layout.backingBytes(blockSize)), layout);
    }
}
