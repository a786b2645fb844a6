package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * copy_file_range(2) on a real mount reaches the file system ({@link RangeCopy}): block-aligned ranges
 * share blocks where the adapter can clone (so the device's free space hardly moves), others are
 * copied; {@code cp}'s default copy uses it too. {@code cp --reflink=always} asks for FICLONE, which
 * the kernel's FUSE client does not pass on (no {@code remap_file_range}): it fails with EOPNOTSUPP on
 * every FUSE mount.
 */
class FuseCopyRangeTest {
    private static final int MIB = 1 << 20;
    /** Copies argv[1] to argv[2] with copy_file_range from argv[3] (source offset) to argv[4] (destination offset), argv[5] bytes. */
    private static final String COPY = "python3 -c 'import os, sys\n"
            + "i = os.open(sys.argv[1], os.O_RDONLY)\n"
            + "o = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT, 0o644)\n"
            + "src, dst, left, total = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), 0\n"
            + "while left > 0:\n"
            + "    n = os.copy_file_range(i, o, left, src + total, dst + total)\n"
            + "    if n == 0:\n"
            + "        break\n"
            + "    total += n\n"
            + "    left -= n\n"
            + "print(total)\n"
            + "' ";

    @TempDir
    Path dir;
    Path image;
    MountedImage mount;
    byte[] random;

    @BeforeEach
    void mount() throws Exception {
        MountedImage.assumeFuse();
        image = dir.resolve("disk.img");
        MountedImage.format(MountedImage.ADAPTER, image, 32L << 20);
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"));
        random = new byte[MIB + 1000];
        new Random(11).nextBytes(random);
        Files.write(dir.resolve("host.bin"), random);
        mount.sh("cp ../host.bin src && sync src");
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    private long freeBlocks() throws Exception {
        return Long.parseLong(mount.sh("sync && stat -f -c %f .").strip());
    }

    @Test
    void alignedRangesShareBlocksAndOthersAreCopied() throws Exception {
        assumeTrue(mount.capabilities().contains(Capability.CLONE), MountedImage.ADAPTER + " cannot clone");
        long free = freeBlocks();
        assertThat(mount.sh(COPY + "src whole 0 0 " + (2 * MIB))).as("cut at the source's EOF")
                .isEqualTo((MIB + 1000) + "\n");
        long used = free - freeBlocks();
        assertThat(used).as("4 KiB blocks taken by a shared 1 MiB copy (metadata only)").isLessThan(16);
        assertThat(mount.sh(COPY + "src part 100 5000 70000")).isEqualTo("70000\n");
        assertThat(mount.sh(COPY + "src part 1048576 0 10")).isEqualTo("10\n");
        assertThat(mount.sh("cmp src whole && echo same")).isEqualTo("same\n");
        mount.unmount();

        try (var image = MountedImage.reopen(MountedImage.ADAPTER, this.image)) {
            byte[] part = new byte[75_000];
            System.arraycopy(random, 1_048_576, part, 0, 10);
            System.arraycopy(random, 100, part, 5000, 70_000);
            assertThat(read(image, "/part")).isEqualTo(part);
            assertThat(read(image, "/whole")).isEqualTo(random);
        }
    }

    @Test
    void cpCopiesThroughCopyFileRangeAndReflinkAlwaysIsRefusedByTheKernel() throws Exception {
        var refused = mount.shell("cp --reflink=always src clone");
        assertThat(refused.exit()).isNotZero();
        assertThat(refused.stderr()).contains("Operation not supported");
        mount.sh("rm -f clone");
        long free = freeBlocks();
        mount.sh("cp --reflink=auto src copy && cmp src copy");
        long used = free - freeBlocks();
        if (mount.capabilities().contains(Capability.CLONE)) {
            assertThat(used).as("cp's copy_file_range shares the blocks").isLessThan(16);
        }
        assertThat(Files.readAllBytes(mount.mountPoint.resolve("copy"))).isEqualTo(random);
        mount.unmount();
    }

    private static byte[] read(MountedImage.Reopened image, String path) throws Exception {
        try (var file = image.fs().open(path)) {
            var buffer = java.nio.ByteBuffer.allocate((int) file.size());
            while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
                // until full
            }
            return Arrays.copyOf(buffer.array(), buffer.position());
        }
    }
}
