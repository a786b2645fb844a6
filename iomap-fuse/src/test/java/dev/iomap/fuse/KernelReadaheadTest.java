package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel's readahead window of a mount ({@link KernelReadahead}, {@link FuseMountOptions#readAheadBytes()}):
 * found through the mount table, written to sysfs, checked in the options; and on a real mount, where
 * the test runs as root.
 */
class KernelReadaheadTest {
    private static final String OTHER = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw";
    private static final String FUSE = "95 22 0:39 / /work/mnt\\040a rw,nosuid,nodev shared:50 - fuse.iomap"
            + " iomap:xfs-like rw,user_id=0,group_id=0";
    private static final String FUSE_ON_TOP = "96 95 0:41 / /work/mnt\\040a rw shared:51 - fuse.iomap iomap:xfs-like"
            + " rw,user_id=0,group_id=0";

    @TempDir
    Path dir;

    @Test
    void theMountTableGivesTheDeviceOfTheFuseMountOnTop() {
        assertThat(MountTable.fuseDevice(List.of(OTHER, FUSE), "/work/mnt a")).contains("0:39");
        assertThat(MountTable.fuseDevice(List.of(OTHER, FUSE, FUSE_ON_TOP), "/work/mnt a")).contains("0:41");
        assertThat(MountTable.fuseDevice(List.of(OTHER, FUSE), "/work/mnt")).isEmpty();
        assertThat(MountTable.fuseDevice(List.of(OTHER, FUSE), "/")).as("not FUSE").isEmpty();
        assertThat(MountTable.fuseDevice(List.of("garbage", ""), "/work/mnt a")).isEmpty();
    }

    @Test
    void theWindowIsWrittenInKibAndReadBack() throws IOException {
        Path bdi = Files.createDirectories(dir.resolve("bdi/0:39"));
        Files.writeString(bdi.resolve("read_ahead_kb"), "128\n");
        long now = KernelReadahead.set(dir.resolve("bdi"), List.of(OTHER, FUSE), Path.of("/work/mnt a"), 3 << 20);
        assertThat(now).isEqualTo(3 << 20);
        assertThat(Files.readString(bdi.resolve("read_ahead_kb"))).isEqualTo("3072");
    }

    @Test
    void withoutAMountOrASysfsFileNothingIsWritten() throws IOException {
        Files.createDirectories(dir.resolve("bdi/0:39"));
        assertThatThrownBy(() -> KernelReadahead.set(dir.resolve("bdi"), List.of(OTHER), Path.of("/work/mnt a"), 1024))
                .isInstanceOf(NoSuchFileException.class).hasMessageContaining("no FUSE mount there");
        assertThatThrownBy(() -> KernelReadahead.set(dir.resolve("bdi"), List.of(FUSE), Path.of("/work/mnt a"), 1024))
                .isInstanceOf(NoSuchFileException.class).hasMessageContaining("read_ahead_kb");
        assertThat(dir.resolve("bdi/0:39/read_ahead_kb")).doesNotExist();
        assertThatThrownBy(() -> KernelReadahead.set(dir.resolve("bdi"), List.of(FUSE), Path.of("/work/mnt a"), 1000))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void onlyTheDefaultWindowRefusedToAUserWhoIsNotRootIsQuiet() {
        var denied = new java.nio.file.AccessDeniedException("/sys/class/bdi/0:39/read_ahead_kb");
        assertThat(IomapMount.readAheadFailureLevel(denied, FuseMountOptions.DEFAULT_READ_AHEAD_BYTES))
                .isEqualTo(System.Logger.Level.DEBUG);
        assertThat(IomapMount.readAheadFailureLevel(denied, 4 << 20)).as("asked for")
                .isEqualTo(System.Logger.Level.WARNING);
        assertThat(IomapMount.readAheadFailureLevel(new NoSuchFileException("/x"),
                FuseMountOptions.DEFAULT_READ_AHEAD_BYTES)).as("not a permission").isEqualTo(System.Logger.Level.WARNING);
    }

    @Test
    void theOptionsTakeZeroOrWholeKibUpToOneGib() {
        FuseMountOptions defaults = FuseMountOptions.defaults();
        assertThat(defaults.readAheadBytes()).isEqualTo(1 << 20);
        assertThat(defaults.withReadAheadBytes(0).readAheadBytes()).isZero();
        assertThat(defaults.withReadAheadBytes(1L << 30).readAheadBytes()).isEqualTo(1L << 30);
        assertThat(defaults.withReadAheadBytes(4096).withDirectIo(false).withReadCache(false).withWritebackCache(true)
                .withFuseOptions(List.of("allow_other")).withLibraryPath(Path.of("/x")).readAheadBytes())
                .as("kept by every wither").isEqualTo(4096);
        for (long bad : new long[] {-1024, 1000, (1L << 30) + 1024}) {
            assertThatThrownBy(() -> defaults.withReadAheadBytes(bad)).as("%d", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("readahead window");
        }
    }

    @Test
    void aMountSetsItsKernelWindowWhereOpensMayCache() throws Exception {
        MountedImage.assumeFuse();
        assumeTrue("root".equals(System.getProperty("user.name")),
                "writing /sys/class/bdi/*/read_ahead_kb needs root; this test runs as " + System.getProperty("user.name"));
        Path image = dir.resolve("disk.img");
        MountedImage.format(MountedImage.ADAPTER, image, 32L << 20);
        assertThat(windowAfterMount(image, "default", FuseMountOptions.defaults())).containsExactly(1L << 20, 1024L);
        assertThat(windowAfterMount(image, "two-mib", FuseMountOptions.defaults().withReadAheadBytes(2 << 20)))
                .containsExactly(2L << 20, 2048L);
        assertThat(windowAfterMount(image, "kernel-own", FuseMountOptions.defaults().withReadAheadBytes(0)))
                .as("the kernel's own window, which INIT's max_readahead of 1 MiB does not raise")
                .containsExactly(-1L, 128L);
        assertThat(windowAfterMount(image, "direct-only", FuseMountOptions.defaults().withReadCache(false)))
                .as("every open direct I/O: nothing is read ahead, the window is left alone")
                .containsExactly(-1L, 128L);
    }

    /** Mounts, and returns what the mount says it set (bytes) and what sysfs says (KiB), then unmounts. */
    private long[] windowAfterMount(Path image, String name, FuseMountOptions options) throws Exception {
        Path mountPoint = Files.createDirectories(dir.resolve(name));
        var device = FileBlockDevice.open(image, 4096, false);
        IomapFileSystem fs;
        try {
            fs = IomapFileSystems.mount(MountedImage.ADAPTER, device, MountOptions.defaults());
        } catch (IOException | RuntimeException e) {
            device.close();
            throw e;
        }
        IomapMount mount;
        try {
            mount = IomapMount.mount(fs, device, mountPoint, options);
        } catch (IOException | RuntimeException e) {
            fs.close();
            device.close();
            throw e;
        }
        try (mount) {
            String bdi = MountTable.fuseDevice(MountTable.read(), mount.mountPoint().toString()).orElseThrow();
            long kib = Long.parseLong(Files.readString(KernelReadahead.SYSFS_BDI.resolve(bdi).resolve("read_ahead_kb"))
                    .strip());
            return new long[] {mount.kernelReadAheadBytes(), kib};
        }
    }
}
