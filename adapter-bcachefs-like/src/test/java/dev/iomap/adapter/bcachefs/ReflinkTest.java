package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** cloneRange shares extents by reference count; the blocks are freed with the last reference. */
class ReflinkTest {

    @Test
    void aCloneSharesTheBlocksAndTheyAreFreedWithTheLastFile() throws IOException {
        RamBlockDevice device = new RamBlockDevice(4096, 32L << 20);
        Images.format(device, Map.of());
        byte[] data = TestData.pattern(5, 0, 512 * 1024);
        long freeEmpty;
        try (IomapFileSystem fs = Images.mount(device)) {
            freeEmpty = fs.statfs().freeBlocks();
            try (IomapFile a = fs.create("/a"); IomapFile b = fs.create("/b")) {
                a.write(0, ByteBuffer.wrap(data));
                a.fsync();
                long freeOne = fs.statfs().freeBlocks();
                assertThat(freeEmpty - freeOne).as("blocks of /a").isGreaterThanOrEqualTo(128);
                b.cloneRange(a, 0, 0, data.length);
                b.fsync();
                assertThat(freeOne - fs.statfs().freeBlocks()).as("data blocks taken by the clone").isLessThan(8);
                b.write(4096, ByteBuffer.wrap(new byte[] {9}));
                b.fsync();
            }
            fs.unlink("/a");
            try (IomapFile b = fs.open("/b")) {
                ByteBuffer back = ByteBuffer.allocate(data.length);
                b.read(0, back);
                data[4096] = 9;
                assertThat(back.array()).isEqualTo(data);
            }
            fs.unlink("/b");
            fs.sync();
            assertThat(fs.statfs().freeBlocks()).as("free blocks once both files are gone").isGreaterThanOrEqualTo(freeEmpty - 8);
        }
        assertThat(Images.extents(device)).isEmpty();
        assertThat(Images.ADAPTER.fsck(device).problems()).isEmpty();
    }
}
