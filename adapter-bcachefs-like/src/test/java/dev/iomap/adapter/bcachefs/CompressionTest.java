package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Compressed extents read back exactly and take fewer blocks when the data compresses. */
class CompressionTest {

    private static byte[] text(int length) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.length() < length; i++) {
            b.append("line ").append(i % 97).append(": the quick brown fox jumps over the lazy dog\n");
        }
        return b.substring(0, length).getBytes(StandardCharsets.US_ASCII);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"lz4", "zstd"})
    void compressibleDataRoundTripsInFewerBlocksAndRandomDataIsStoredAsIs(String compression) throws IOException {
        RamBlockDevice device = new RamBlockDevice(4096, 32L << 20);
        Images.format(device, Map.of("compression", compression));
        byte[] text = text(1 << 20);
        byte[] random = TestData.pattern(3, 0, 256 * 1024);
        try (IomapFileSystem fs = Images.mount(device)) {
            try (IomapFile f = fs.create("/text"); IomapFile g = fs.create("/random")) {
                f.write(0, ByteBuffer.wrap(text));
                g.write(0, ByteBuffer.wrap(random));
                f.write(5000, ByteBuffer.wrap(random, 0, 3000));
                System.arraycopy(random, 0, text, 5000, 3000);
                fs.sync();
                assertThat(f.stat().allocatedBytes()).as("compressed text").isLessThan(text.length / 4);
                assertThat(g.stat().allocatedBytes()).as("random data").isEqualTo(random.length);
            }
        }
        List<BcachefsVolume.Extent> extents = Images.extents(device);
        assertThat(extents).filteredOn(e -> e.ino() == 2)
                .allSatisfy(e -> assertThat(e.value().physBlocks()).isLessThan(e.value().uncompressedBlocks()));
        assertThat(extents).filteredOn(e -> e.ino() == 3)
                .allSatisfy(e -> assertThat(e.value().compression()).isEqualTo(Codecs.COMPRESS_NONE));
        try (IomapFileSystem fs = Images.mount(device); IomapFile f = fs.open("/text"); IomapFile g = fs.open("/random")) {
            ByteBuffer back = ByteBuffer.allocate(text.length);
            f.read(0, back);
            assertThat(back.array()).isEqualTo(text);
            ByteBuffer back2 = ByteBuffer.allocate(random.length);
            g.read(0, back2);
            assertThat(back2.array()).isEqualTo(random);
        }
        assertThat(Images.ADAPTER.fsck(device, true).problems()).isEmpty();
    }
}
