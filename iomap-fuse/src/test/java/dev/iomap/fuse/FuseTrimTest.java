package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fstrim} on a mount (FITRIM; xfstests' {@code _require_batched_discard}, generic/251, 260): the
 * deleted file's blocks are discarded, fstrim reports what it trimmed, and the file system stays whole;
 * on a read-only mount it is refused with EROFS (generic/537: under {@code ro,norecovery} fstrim must fail).
 */
class FuseTrimTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"xfs-like", "gfs2-like", "bcachefs-like"})
    void fstrimDiscardsTheDeletedFilesBlocksAndReportsIt(String adapter) throws Exception {
        MountedImage.assumeFuse();
        assumeTrue(MountedImage.onPath("fstrim"), "fstrim (util-linux) missing");
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, 64L << 20);
        try (MountedImage mount = MountedImage.mount(adapter, image, dir.resolve("mnt"))) {
            mount.sh("dd if=/dev/urandom of=big bs=1M count=8 status=none && sync big");
            mount.sh("rm big && sync .");
            String out = mount.sh("fstrim -v .");
            assertThat(out).matches("\\.: [0-9.]+ [KMG]iB \\(([0-9]+) bytes\\) trimmed\\n");
            long trimmed = Long.parseLong(out.replaceAll("(?s).*\\(([0-9]+) bytes\\).*", "$1"));
            assertThat(trimmed).isGreaterThanOrEqualTo(8L << 20);
            mount.sh("printf x > after && sync after && cat after");
            mount.unmount();
        }
        assertThat(MountedImage.fsck(adapter, image).problems()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"xfs-like", "gfs2-like", "bcachefs-like"})
    void fstrimOnAReadOnlyMountIsRefused(String adapter) throws Exception {
        MountedImage.assumeFuse();
        assumeTrue(MountedImage.onPath("fstrim"), "fstrim (util-linux) missing");
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, 64L << 20);
        FuseMountOptions readOnly = FuseMountOptions.defaults().withFuseOptions(List.of("ro"));
        try (MountedImage mount = MountedImage.mount(adapter, image, dir.resolve("mnt"), readOnly)) {
            MountedImage.ShellResult result = mount.shell("fstrim -v .");
            assertThat(result.exit()).as(result.stdout()).isNotZero();
            assertThat(result.stderr()).contains("Read-only file system");
            mount.unmount();
        }
    }
}
