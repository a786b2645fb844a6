package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 35 item 2: the cache of verified extents must not hand out the data of an extent whose blocks
 * were freed and reused. With {@code checksum=none} every compressed extent's checksum is 0, so a new
 * extent written to reused blocks with the same compressed length has the same location, length and
 * checksum as the freed one.
 */
class ExtentCacheReuseTest {

    @ParameterizedTest(name = "compression {0}")
    @ValueSource(strings = {"lz4", "zstd"})
    void aReadOfAnExtentWrittenToReusedBlocksReturnsTheNewBytes(String compression) throws IOException {
        int blockSize = 4096;
        RamBlockDevice device = new RamBlockDevice(blockSize, 8L << 20);
        Images.format(device, Map.of("checksum", "none", "compression", compression));
        int length = 16 * blockSize;
        try (IomapFileSystem fs = Images.mount(device); IomapFile f = fs.create("/f")) {
            for (int round = 0; round < 20; round++) {
                byte fill = (byte) ('!' + round);
                byte[] wrote = new byte[length];
                Arrays.fill(wrote, fill);
                f.write(0, ByteBuffer.wrap(wrote));
                f.fsync();
                fs.dropCleanCache();
                ByteBuffer back = ByteBuffer.allocate(length);
                f.read(0, back);
                assertThat(Arrays.mismatch(back.array(), wrote)).as("round %d: wrote '%c', read back '%c'", round,
                        (char) fill, (char) back.get(0)).isEqualTo(-1);
            }
        }
    }
}
