package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Data extents are verified whole before any byte of them is returned. */
class DataChecksumTest {

    @ParameterizedTest(name = "checksum {0}, compression {1}")
    @CsvSource({"crc32c,none", "xxhash64,none", "crc32c,lz4", "xxhash64,zstd"})
    void aFlippedBitInADataExtentFailsTheReadOfEveryByteOfItAndScrubReportsIt(String checksum, String compression)
            throws IOException {
        RamBlockDevice device = new RamBlockDevice(4096, 32L << 20);
        Images.format(device, Map.of("checksum", checksum, "compression", compression));
        byte[] data = TestData.pattern(7, 0, 3 * 65536);
        try (IomapFileSystem fs = Images.mount(device); IomapFile f = fs.create("/f")) {
            f.write(0, ByteBuffer.wrap(data));
            f.fsync();
        }
        List<BcachefsVolume.Extent> extents = Images.extents(device);
        assertThat(extents).as("64 KiB extents").hasSize(3);
        BcachefsVolume.Extent victim = extents.get(1);
        long flipAt = victim.value().devStart() * 4096 + victim.value().storedBytes() / 2;
        byte[] one = device.peek(flipAt, 1);
        device.poke(flipAt, new byte[] {(byte) (one[0] ^ 0x10)}, 0, 1);

        // readahead off: a background read of the bad extent would count a checksum error of its own
        MountOptions noReadahead = MountOptions.of(PageCacheOptions.builder().maxReadaheadBytes(0).build());
        try (IomapFileSystem fs = CoreRuntime.mount(Images.ADAPTER, device, noReadahead);
                IomapFile f = fs.open("/f")) {
            for (long at : new long[] {victim.start() * 4096, victim.start() * 4096 + 4095, victim.end() * 4096 - 1}) {
                ByteBuffer one1 = ByteBuffer.allocate(1);
                assertThatThrownBy(() -> f.read(at, one1)).as("read of byte %d", at).isInstanceOf(IOException.class)
                        .hasMessageContaining("mismatch");
                fs.dropCleanCache();
            }
            ByteBuffer before = ByteBuffer.allocate(65536);
            f.read(0, before);
            assertThat(before.array()).as("the extent before is intact").isEqualTo(java.util.Arrays.copyOf(data, 65536));
            ByteBuffer after = ByteBuffer.allocate(65536);
            f.read(2 * 65536, after);
            assertThat(after.array()).isEqualTo(java.util.Arrays.copyOfRange(data, 2 * 65536, 3 * 65536));
            assertThat(fs.stats().adapterCounter("checksum_errors")).isEqualTo(3);
        }
        assertThat(Images.ADAPTER.fsck(device).problems()).as("fsck without scrub reads no data").isEmpty();
        assertThat(Images.ADAPTER.fsck(device, true).problems()).singleElement().asString()
                .startsWith("scrub: inode 2 at file offset 65536 (65536 bytes)");
    }
}
