package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** What the mount asks of the kernel in libfuse's init callback ({@code struct fuse_conn_info}). */
class FuseInitTest {
    /**
     * libfuse offers readdirplus with the kernel's heuristic ({@code FUSE_CAP_READDIRPLUS_AUTO}): plus for
     * the first page of a listing only. A cold {@code find -ls} of 5,000 files then sent 5,000 LOOKUPs (0.22x
     * of ext4); the mount asks for readdirplus on every page instead.
     */
    @Test
    void everyPageOfAListingIsReaddirplus() throws Exception {
        int offered = LowLevelOps.CAP_READDIRPLUS | LowLevelOps.CAP_READDIRPLUS_AUTO | LowLevelOps.CAP_AUTO_INVAL_DATA;
        try (RamBlockDevice device = new RamBlockDevice(512, 4L << 20)) {
            IomapFileSystems.format(SnapAdapter.NAME, device, FormatOptions.blockSize(4096));
            try (IomapFileSystem fs = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults());
                    Arena arena = Arena.ofConfined()) {
                FuseBridge bridge = new FuseBridge(fs, FuseBridgeTest.ROOT_USER, FuseBridgeTest.DEFAULT);
                MemorySegment conn = arena.allocate(FuseStructs.CONN_INFO);
                conn.set(JAVA_INT, FuseStructs.offset(FuseStructs.CONN_INFO, "capable"), offered);
                conn.set(JAVA_INT, FuseStructs.offset(FuseStructs.CONN_INFO, "want"), offered);

                new LowLevelOps(null, bridge, FuseBridgeTest.ROOT_USER, () -> { }).init(MemorySegment.NULL, conn);

                int want = conn.get(JAVA_INT, FuseStructs.offset(FuseStructs.CONN_INFO, "want"));
                assertThat(want & LowLevelOps.CAP_READDIRPLUS).as("readdirplus").isNotZero();
                assertThat(want & LowLevelOps.CAP_READDIRPLUS_AUTO).as("readdirplus only for the first page").isZero();
                bridge.releaseAll();
            }
        }
    }
}
