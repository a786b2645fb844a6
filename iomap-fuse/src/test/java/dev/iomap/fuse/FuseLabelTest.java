package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.FormatOptions;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The label ioctls ({@code FS_IOC_GETFSLABEL}, {@code FS_IOC_SETFSLABEL}; xfstests' {@code xfs_io -c
 * label}, generic/492): a get answers the superblock's label, a set by root writes it durably, another
 * user's set is EPERM, and a file system that keeps no label answers ENOTTY.
 */
class FuseLabelTest {
    private static final String PYTHON3 = "/usr/bin/python3";
    /** {@code label [NEW]}: prints the label, after setting it to NEW if given, or the errno's name. */
    private static final String LABEL = PYTHON3 + " -c 'import errno, fcntl, os, sys\n"
            + "fd = os.open(\".\", os.O_RDONLY)\n"
            + "try:\n"
            + "    if len(sys.argv) > 1:\n"
            + "        fcntl.ioctl(fd, 0x41009432, sys.argv[1].encode().ljust(256, b\"\\0\"))\n"
            + "    print(fcntl.ioctl(fd, 0x81009431, bytes(256)).rstrip(b\"\\0\").decode())\n"
            + "except OSError as e:\n"
            + "    print(errno.errorcode[e.errno])\n"
            + "' ";

    @TempDir
    Path dir;

    @Test
    void aFileSystemWithoutALabelAnswersEnottyToBoth() throws Exception {
        try (var device = new RamBlockDevice(512, 4L << 20)) {
            IomapFileSystems.format(SnapAdapter.NAME, device, FormatOptions.blockSize(4096));
            try (IomapFileSystem fs = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults())) {
                var bridge = new FuseBridge(fs, FuseBridgeTest.ROOT_USER, FuseBridgeTest.DEFAULT);
                ByteBuffer buffer = ByteBuffer.allocate(InodeOperations.FSLABEL_MAX);
                assertThat(FuseBridgeTest.errno(() -> bridge.ioctl(Nodes.ROOT, InodeOperations.FS_IOC_GETFSLABEL,
                        buffer, FuseBridgeTest.ROOT_USER))).isEqualTo(-LinuxErrno.ENOTTY);
                buffer.put(0, (byte) 'x');
                assertThat(FuseBridgeTest.errno(() -> bridge.ioctl(Nodes.ROOT, InodeOperations.FS_IOC_SETFSLABEL,
                        buffer, FuseBridgeTest.ROOT_USER))).isEqualTo(-LinuxErrno.ENOTTY);
                ByteBuffer noNul = ByteBuffer.allocate(InodeOperations.FSLABEL_MAX);
                while (noNul.hasRemaining()) {
                    noNul.put((byte) 'y');
                }
                assertThat(FuseBridgeTest.errno(() -> bridge.ioctl(Nodes.ROOT, InodeOperations.FS_IOC_SETFSLABEL,
                        noNul, FuseBridgeTest.ROOT_USER))).as("no NUL in 256 bytes").isEqualTo(-LinuxErrno.EINVAL);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"xfs-like", "bcachefs-like"})
    void rootSetsTheLabelOfAMountAnotherUserCannotAndTheNextMountHasIt(String adapter) throws Exception {
        MountedImage.assumeFuse();
        assumeTrue(MountedImage.run(Path.of("/"), List.of("id", "-u")).stdout().strip().equals("0"),
                "acting as another user needs root");
        assumeTrue(MountedImage.onPath("setpriv") && Files.isExecutable(Path.of(PYTHON3)),
                "setpriv or " + PYTHON3 + " missing");
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, 32L << 20);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
        try (MountedImage mount = MountedImage.mount(adapter, image, dir.resolve("mnt"),
                FuseMountOptions.defaults().withFuseOptions(List.of("allow_other")))) {
            String out = mount.sh(LABEL + "; " + LABEL + "backup-2026; "
                    + "setpriv --reuid=65534 --regid=65534 --clear-groups -- " + LABEL + "other; "
                    + LABEL + "x" + "y".repeat(32) + "; " + LABEL);
            assertThat(out).isEqualTo("\nbackup-2026\nEPERM\nEINVAL\nbackup-2026\n");
            mount.unmount();
        }
        try (var reopened = MountedImage.reopen(adapter, image)) {
            assertThat(reopened.fs().label()).isEqualTo("backup-2026");
        }
        assertThat(MountedImage.fsck(adapter, image).problems()).isEmpty();
    }
}
