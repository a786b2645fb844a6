package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SmokeTest {
    @Test
    void writeReadRemount() throws Exception {
        RamBlockDevice device = new RamBlockDevice(4096, 16L << 20);
        BcachefsLikeAdapter adapter = new BcachefsLikeAdapter();
        adapter.format(device, new FormatOptions(4096, "t", Map.of("compression", "lz4")));
        byte[] data = new byte[300_000];
        new Random(1).nextBytes(data);
        try (IomapFileSystem fs = CoreRuntime.mount(adapter, device, MountOptions.defaults());
                IomapFile f = fs.create("/a")) {
            f.write(0, ByteBuffer.wrap(data));
            f.write(5000, ByteBuffer.wrap(new byte[10000]));
            f.fsync();
            fs.dropCleanCache();
            ByteBuffer back = ByteBuffer.allocate(data.length);
            f.read(0, back);
            System.arraycopy(new byte[10000], 0, data, 5000, 10000);
            assertThat(back.array()).isEqualTo(data);
        }
        try (IomapFileSystem fs = CoreRuntime.mount(adapter, device, MountOptions.defaults());
                IomapFile f = fs.open("/a")) {
            ByteBuffer back = ByteBuffer.allocate(data.length);
            f.read(0, back);
            assertThat(back.array()).isEqualTo(data);
        }
        assertThat(adapter.fsck(device, true).problems()).isEmpty();
    }
}
