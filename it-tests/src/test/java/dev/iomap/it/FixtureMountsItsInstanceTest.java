package dev.iomap.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.xfs.XfsLikeAdapter;
import dev.iomap.api.Capability;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The kit's fixture mounts the very adapter instance it was given (issue 18): an adapter that is no
 * registered plugin, under a name no plugin has, is formatted, mounted and checked on that instance.
 */
class FixtureMountsItsInstanceTest {

    /** xfs-like under another name, counting the calls that reach this instance. */
    private static final class Counting implements FileSystemAdapter {
        private final FileSystemAdapter inner = new XfsLikeAdapter();
        final AtomicInteger formats = new AtomicInteger();
        final AtomicInteger mounts = new AtomicInteger();
        final AtomicInteger checks = new AtomicInteger();

        @Override
        public String name() {
            return "counting-xfs-like";
        }

        @Override
        public String description() {
            return "xfs-like, counting calls";
        }

        @Override
        public Set<Capability> capabilities() {
            return inner.capabilities();
        }

        @Override
        public void format(BlockDevice device, FormatOptions options) throws IOException {
            formats.incrementAndGet();
            inner.format(device, options);
        }

        @Override
        public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
            mounts.incrementAndGet();
            return inner.mount(device, options);
        }

        @Override
        public FsckReport fsck(BlockDevice device) throws IOException {
            checks.incrementAndGet();
            return inner.fsck(device);
        }
    }

    @Test
    void formatMountAndFsckAllReachTheInstanceGiven() throws IOException {
        Counting adapter = new Counting();
        assertThat(IomapFileSystems.adapters()).doesNotContain(adapter.name());
        AdapterFixture fixture = AdapterFixture.of(adapter, new Geometry(4096, 4096, 0));
        try (RamBlockDevice device = fixture.newFormattedDevice()) {
            try (IomapFileSystem fs = fixture.mount(device)) {
                try (IomapFile file = fs.create("/a")) {
                    file.write(0, ByteBuffer.wrap("instance".getBytes(StandardCharsets.US_ASCII)));
                    file.fsync();
                }
            }
            assertThat(fixture.fsck(device).isClean()).isTrue();
            try (IomapFileSystem fs = fixture.mount(device); IomapFile file = fs.open("/a")) {
                ByteBuffer back = ByteBuffer.allocate(8);
                file.read(0, back);
                assertThat(new String(back.array(), StandardCharsets.US_ASCII)).isEqualTo("instance");
            }
        }
        assertThat(adapter.formats).hasValue(1);
        assertThat(adapter.mounts).hasValue(2);
        assertThat(adapter.checks).hasValue(1);
    }
}
