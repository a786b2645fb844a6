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

/** Writeback never writes over blocks a committed extent points to. */
class CopyOnWriteTest {

    @Test
    void anOverwriteNeverWritesOverTheOldExtentsBlocks() throws IOException {
        RamBlockDevice ram = new RamBlockDevice(4096, 32L << 20);
        Images.format(ram, Map.of());
        byte[] first = TestData.pattern(1, 0, 256 * 1024);
        try (IomapFileSystem fs = Images.mount(ram); IomapFile f = fs.create("/f")) {
            f.write(0, ByteBuffer.wrap(first));
            f.fsync();
        }
        List<BcachefsVolume.Extent> old = Images.extents(ram);
        assertThat(old).hasSize(4);
        CountingDevice counting = new CountingDevice(ram);
        byte[] second = TestData.pattern(2, 0, 256 * 1024);
        try (IomapFileSystem fs = Images.mount(counting); IomapFile f = fs.open("/f")) {
            counting.record(true);
            f.write(0, ByteBuffer.wrap(second));
            f.write(100_000, ByteBuffer.wrap(new byte[] {1, 2, 3}));
            f.fsync();
            counting.record(false);
            List<CountingDevice.Request> writes = counting.requests().stream()
                    .filter(r -> r.kind() == Fault.Kind.WRITE).toList();
            assertThat(writes).filteredOn(r -> r.purpose() == IoPurpose.DATA).hasSizeGreaterThanOrEqualTo(4);
            for (CountingDevice.Request w : writes) {
                for (BcachefsVolume.Extent e : old) {
                    long start = e.value().devStart() * 4096;
                    long end = start + e.value().physBlocks() * 4096L;
                    assertThat(w.offset() + w.length() <= start || w.offset() >= end)
                            .as("%s write [%d, +%d) against the old extent at device [%d, %d)", w.purpose(), w.offset(),
                                    w.length(), start, end)
                            .isTrue();
                }
            }
        }
        second[100_000] = 1;
        second[100_001] = 2;
        second[100_002] = 3;
        try (IomapFileSystem fs = Images.mount(ram); IomapFile f = fs.open("/f")) {
            ByteBuffer back = ByteBuffer.allocate(second.length);
            f.read(0, back);
            assertThat(back.array()).isEqualTo(second);
        }
        assertThat(Images.ADAPTER.fsck(ram, true).problems()).isEmpty();
    }
}
