package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.bcachefs.store.BtreeStore;
import dev.iomap.adapter.bcachefs.store.DataSpace;
import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every block a write reserved is either allocated at writeback or given back, and every block
 * writeback allocated is referenced by a key or released: after random writes, overwrites,
 * truncates, punches and clones have been synced, the data space holds no reservation and no
 * allocated block that no key references (the store's free count equals the device's blocks less
 * the referenced ones, the nodes and the journal, as a fresh open of the image computes it).
 */
class ReservationAccountingTest {

    /** The adapter, handing out the mount it makes. */
    private record Capturing(BcachefsLikeMount[] mounted) implements FileSystemAdapter {
        @Override
        public String name() {
            return Images.ADAPTER.name();
        }

        @Override
        public String description() {
            return Images.ADAPTER.description();
        }

        @Override
        public Set<Capability> capabilities() {
            return Images.ADAPTER.capabilities();
        }

        @Override
        public void format(BlockDevice device, FormatOptions options) throws IOException {
            Images.ADAPTER.format(device, options);
        }

        @Override
        public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
            mounted[0] = (BcachefsLikeMount) Images.ADAPTER.mount(device, options);
            return mounted[0];
        }

        @Override
        public FsckReport fsck(BlockDevice device) throws IOException {
            return Images.ADAPTER.fsck(device);
        }
    }

    @ParameterizedTest(name = "compression {0}")
    @ValueSource(strings = {"none", "zstd"})
    void afterSyncNoReservationOrUnusedAllocationIsLeft(String compression) throws IOException {
        RamBlockDevice device = new RamBlockDevice(1024, 16L << 20);
        Images.format(device, Map.of("compression", compression));
        Random random = new Random(11);
        long availableMounted;
        BcachefsLikeMount[] mounted = new BcachefsLikeMount[1];
        FileSystemAdapter capturing = new Capturing(mounted);
        try (IomapFileSystem fs = CoreRuntime.mount(capturing, device, MountOptions.defaults())) {
            try (IomapFile a = fs.create("/a"); IomapFile b = fs.create("/b")) {
                for (int i = 0; i < 200; i++) {
                    IomapFile f = random.nextBoolean() ? a : b;
                    long at = random.nextInt(1 << 20);
                    switch (random.nextInt(6)) {
                        case 0 -> f.truncate(random.nextInt(1 << 20));
                        case 1 -> f.fallocate(FallocateMode.PUNCH_HOLE, at, random.nextInt(20000) + 1, true);
                        case 2 -> {
                            if (a.size() > 8192) {
                                b.cloneRange(a, 0, 4096L * random.nextInt(100), 8192);
                            }
                        }
                        default -> f.write(at, TestData.buffer(i, at, random.nextInt(30000) + 1));
                    }
                    if (i % 37 == 0) {
                        fs.sync();
                    }
                }
            }
            fs.sync();
            DataSpace space = mounted[0].volume.store.space();
            assertThat(space.reserved()).as("blocks still reserved after sync").isZero();
            mounted[0].volume.store.checkpoint();
            availableMounted = space.available();
        }
        try (KeyStore store = BtreeStore.open(device, false)) {
            assertThat(store.space().available()).as("blocks available to a fresh open of the image")
                    .isEqualTo(availableMounted);
        }
        assertThat(Images.ADAPTER.fsck(device, true).problems()).isEmpty();
    }
}
