package dev.iomap.fuse;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shutdown ioctl (issue 38; xfstests' {@code godown}, {@code XFS_IOC_GOINGDOWN}): root only; what
 * was fsync'd survives, every later operation fails with EIO, nothing more reaches the device, and the
 * next mount recovers the image.
 */
class FuseShutdownTest {
    /**
     * godown as python: {@code ioctl(open(DIR), XFS_IOC_GOINGDOWN, &flag)} on the mount's root (the
     * system's python3, which another user can run).
     */
    private static final String PYTHON3 = "/usr/bin/python3";
    private static final String GODOWN = PYTHON3 + " -c 'import fcntl, os; "
            + "fcntl.ioctl(os.open(\".\", os.O_RDONLY), 0x8004587d, bytes(4))'";

    @TempDir
    Path dir;

    /** Before: ENOTTY, so xfstests' _require_scratch_shutdown skipped ~25 tests. */
    @Test
    void aShutdownKeepsWhatWasFsyncedFailsEverythingAfterAndWritesNothingMore() throws Exception {
        try (var device = new RamBlockDevice(512, 4L << 20)) {
            IomapFileSystems.format(SnapAdapter.NAME, device, FormatOptions.blockSize(4096));
            IomapFileSystem fs = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults());
            var bridge = new FuseBridge(fs, FuseBridgeTest.ROOT_USER, FuseBridgeTest.DEFAULT);
            FuseBridge.Created a = bridge.create(Nodes.ROOT, "a", 0644, FuseBridgeTest.O_RDWR, FuseBridgeTest.USER);
            bridge.write(a.opened().fh(), 0, ByteBuffer.wrap("A".getBytes(UTF_8)), false);
            bridge.fsync(a.opened().fh(), false);
            FuseBridge.Created b = bridge.create(Nodes.ROOT, "b", 0644, FuseBridgeTest.O_RDWR, FuseBridgeTest.USER);
            bridge.write(b.opened().fh(), 0, ByteBuffer.wrap("B".getBytes(UTF_8)), false);

            ByteBuffer none = ByteBuffer.allocate(0);
            assertThat(FuseBridgeTest.errno(() -> bridge.ioctl(Nodes.ROOT, InodeOperations.XFS_IOC_GOINGDOWN, none,
                    FuseBridgeTest.USER))).isEqualTo(-LinuxErrno.EPERM);
            assertThat(bridge.isShutDown()).isFalse();
            long flushes = device.stats().flushes();
            bridge.ioctl(Nodes.ROOT, InodeOperations.XFS_IOC_GOINGDOWN, none, FuseBridgeTest.ROOT_USER);
            assertThat(device.stats().flushes()).as("the device flushed").isGreaterThan(flushes);
            long writes = device.stats().writes();

            assertThat(bridge.isShutDown()).isTrue();
            for (FuseBridgeTest.Call call : List.<FuseBridgeTest.Call>of(
                    () -> bridge.read(a.opened().fh(), 0, ByteBuffer.allocate(1)),
                    () -> bridge.write(b.opened().fh(), 1, ByteBuffer.wrap(new byte[] {1}), false),
                    () -> bridge.fsync(b.opened().fh(), false),
                    () -> bridge.getattr(a.entry().nodeid(), 0),
                    () -> bridge.lookup(Nodes.ROOT, "a"),
                    () -> bridge.opendir(Nodes.ROOT),
                    () -> bridge.mkdir(Nodes.ROOT, "d", 0755, FuseBridgeTest.USER),
                    () -> bridge.statfs())) {
                assertThat(FuseBridgeTest.errno(call)).isEqualTo(-LinuxErrno.EIO);
            }
            bridge.ioctl(Nodes.ROOT, InodeOperations.XFS_IOC_GOINGDOWN, none, FuseBridgeTest.ROOT_USER);
            bridge.releaseAll();
            assertThatThrownBy(fs::close).isInstanceOf(FileSystemShutdownException.class);
            assertThat(device.stats().writes()).as("nothing written after the shutdown").isEqualTo(writes);

            try (IomapFileSystem again = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults());
                    IomapFile file = again.open("/a")) {
                ByteBuffer data = ByteBuffer.allocate(2);
                assertThat(file.read(0, data)).isEqualTo(1);
                assertThat(data.get(0)).isEqualTo((byte) 'A');
            }
            assertThat(IomapFileSystems.fsck(SnapAdapter.NAME, device).problems()).isEmpty();
        }
    }

    @Test
    void godownOnAMountShutsItDownForRootOnlyAndTheNextMountHasWhatWasFsynced() throws Exception {
        MountedImage.assumeFuse();
        assumeTrue(MountedImage.run(Path.of("/"), List.of("id", "-u")).stdout().strip().equals("0"),
                "acting as another user needs root");
        assumeTrue(MountedImage.onPath("setpriv") && Files.isExecutable(Path.of(PYTHON3)),
                "setpriv or " + PYTHON3 + " missing");
        Path image = dir.resolve("disk.img");
        MountedImage.format(MountedImage.ADAPTER, image, 32L << 20);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
        try (MountedImage mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"),
                FuseMountOptions.defaults().withFuseOptions(List.of("allow_other")))) {
            String out = mount.sh("printf A > a; sync a; printf B > b; "
                    + "{ setpriv --reuid=65534 --regid=65534 --clear-groups -- " + GODOWN + " 2>&1 || true; } | tail -1; "
                    + "cat a; " + GODOWN + "; echo down; "
                    + "cat a 2>&1 || true; ls 2>&1 || true; touch c 2>&1 || true");
            assertThat(out).isEqualTo("PermissionError: [Errno 1] Operation not permitted\nAdown\n"
                    + "cat: a: Input/output error\nls: cannot open directory '.': Input/output error\n"
                    + "touch: cannot touch 'c': Input/output error\n");
            mount.unmountShutDown();
        }
        try (var reopened = MountedImage.reopen(MountedImage.ADAPTER, image);
                IomapFile file = reopened.fs().open("/a")) {
            ByteBuffer data = ByteBuffer.allocate(2);
            assertThat(file.read(0, data)).isEqualTo(1);
            assertThat(data.get(0)).isEqualTo((byte) 'A');
        }
        assertThat(MountedImage.fsck(MountedImage.ADAPTER, image).problems()).isEmpty();
    }
}
