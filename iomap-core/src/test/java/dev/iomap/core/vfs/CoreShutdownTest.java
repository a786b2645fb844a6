package dev.iomap.core.vfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * {@link IomapFileSystem#shutDown()} (issue 38, the FUSE mount's {@code XFS_IOC_GOINGDOWN}): the log
 * force makes every change made before it durable (xfstests generic/042: a file created and written
 * before {@code godown -f} is there after the remount), the device is flushed, nothing is written after,
 * and every operation and the final close fail with {@link FileSystemShutdownException}.
 */
class CoreShutdownTest {
    @Test
    void aShutdownForcesTheLogWritesNothingMoreAndTheNextMountHasEveryChangeMadeBeforeIt() throws Exception {
        try (var device = new RamBlockDevice(1024, 8L << 20)) {
            new SnapAdapter().format(device, FormatOptions.blockSize(1024));
            IomapFileSystem fs = CoreRuntime.mount(new SnapAdapter(), device, MountOptions.defaults());
            try (IomapFile a = fs.create("/a")) {
                a.write(0, ByteBuffer.wrap(new byte[] {'A'}));
                a.fsync();
            }
            IomapFile b = fs.create("/b");
            b.write(0, ByteBuffer.wrap(new byte[] {'B'}));
            long flushes = device.stats().flushes();

            fs.shutDown();
            assertThat(device.stats().flushes()).isGreaterThan(flushes);
            long writes = device.stats().writes();
            assertThatThrownBy(() -> fs.stat("/a")).isInstanceOf(FileSystemShutdownException.class);
            assertThatThrownBy(() -> fs.create("/c")).isInstanceOf(FileSystemShutdownException.class);
            assertThatThrownBy(fs::sync).isInstanceOf(FileSystemShutdownException.class);
            fs.shutDown();
            assertThatThrownBy(fs::close).isInstanceOf(FileSystemShutdownException.class);
            assertThat(device.stats().writes()).as("nothing written after the shutdown").isEqualTo(writes);

            try (IomapFileSystem again = CoreRuntime.mount(new SnapAdapter(), device, MountOptions.defaults());
                    IomapFile a = again.open("/a"); IomapFile b2 = again.open("/b")) {
                ByteBuffer data = ByteBuffer.allocate(2);
                assertThat(a.read(0, data)).isEqualTo(1);
                assertThat(data.get(0)).isEqualTo((byte) 'A');
                data.clear();
                assertThat(b2.read(0, data)).as("written, not fsync'd, before the shutdown").isEqualTo(1);
                assertThat(data.get(0)).isEqualTo((byte) 'B');
            }
        }
    }
}
