package dev.iomap.adapter.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class BlockSizeViewTest {

    @Test
    void aViewNumbersBlocksInTheLargerSizeAndPassesBytesThrough() throws IOException {
        try (RamBlockDevice device = new RamBlockDevice(512, 10 * 4096 + 1024)) {
            BlockDevice view = BlockSizeView.of(device, 4096);
            assertThat(view.blockSize()).isEqualTo(4096);
            assertThat(view.capacity()).as("rounded down to whole 4 KiB blocks").isEqualTo(10 * 4096);
            byte[] block = new byte[4096];
            Arrays.fill(block, (byte) 0x5a);
            view.write(3 * 4096, List.of(ByteBuffer.wrap(block)), IoPurpose.METADATA).join();
            ByteBuffer sector = ByteBuffer.allocate(512);
            device.read(3 * 4096 + 3584, sector);
            assertThat(sector.array()).containsOnly((byte) 0x5a);
            view.close();
            ByteBuffer again = ByteBuffer.allocate(512);
            device.read(3 * 4096, again);
            assertThat(again.array()).as("closing the view leaves the device open").containsOnly((byte) 0x5a);
        }
    }

    @Test
    void theSameSizeIsTheDeviceItselfAndASmallerOrOddSizeIsRefused() throws IOException {
        try (RamBlockDevice device = new RamBlockDevice(4096, 1 << 20)) {
            assertThat(BlockSizeView.of(device, 4096)).isSameAs(device);
            assertThatThrownBy(() -> BlockSizeView.of(device, 2048)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("4096");
            assertThatThrownBy(() -> BlockSizeView.of(device, 12288)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
