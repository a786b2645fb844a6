package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.Fault;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code nocow=true}: unshared blocks are overwritten in place and extents carry no checksum; shared ones are still copied. */
class NocowTest {

    @Test
    void anOverwriteGoesInPlaceWithoutChecksumsUnlessTheBlocksAreShared() throws IOException {
        RamBlockDevice ram = new RamBlockDevice(4096, 16L << 20);
        Images.format(ram, Map.of("nocow", "true"));
        byte[] data = TestData.pattern(1, 0, 64 * 1024);
        try (IomapFileSystem fs = Images.mount(ram); IomapFile f = fs.create("/f")) {
            f.write(0, ByteBuffer.wrap(data));
            f.fsync();
        }
        List<BcachefsVolume.Extent> before = Images.extents(ram);
        assertThat(before).singleElement().satisfies(e -> {
            assertThat(e.value().checksumType()).isEqualTo(Codecs.CSUM_NONE);
            assertThat(e.value().narrowable()).isTrue();
        });
        long home = before.get(0).value().devStart() * 4096;
        CountingDevice counting = new CountingDevice(ram);
        try (IomapFileSystem fs = Images.mount(counting); IomapFile f = fs.open("/f")) {
            counting.record(true);
            f.write(8192, ByteBuffer.wrap(new byte[] {7, 7, 7}));
            f.fsync();
            counting.record(false);
            assertThat(counting.requests()).filteredOn(r -> r.kind() == Fault.Kind.WRITE && r.purpose() == IoPurpose.DATA)
                    .singleElement().satisfies(r -> assertThat(r.offset()).isEqualTo(home + 8192));
            try (IomapFile g = fs.create("/g")) {
                g.cloneRange(f, 0, 0, data.length);
                counting.clearRequests();
                counting.record(true);
                f.write(0, ByteBuffer.wrap(new byte[] {1}));
                f.fsync();
                counting.record(false);
                assertThat(counting.requests())
                        .filteredOn(r -> r.kind() == Fault.Kind.WRITE && r.purpose() == IoPurpose.DATA)
                        .singleElement().satisfies(r -> assertThat(r.offset() >= home + data.length
                                || r.offset() + r.length() <= home).as("a shared block is copied, not overwritten")
                                .isTrue());
            }
        }
        data[8192] = data[8193] = data[8194] = 7;
        try (IomapFileSystem fs = Images.mount(ram); IomapFile g = fs.open("/g"); IomapFile f = fs.open("/f")) {
            ByteBuffer back = ByteBuffer.allocate(data.length);
            g.read(0, back);
            assertThat(back.array()).as("the clone keeps the content it shared").isEqualTo(data);
            data[0] = 1;
            ByteBuffer back2 = ByteBuffer.allocate(data.length);
            f.read(0, back2);
            assertThat(back2.array()).isEqualTo(data);
        }
        assertThat(Images.ADAPTER.fsck(ram, true).problems()).isEmpty();
    }
}
