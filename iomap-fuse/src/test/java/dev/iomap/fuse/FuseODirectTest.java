package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code open(2)} with {@code O_DIRECT} on a real mount is a direct open of the file (issue 17):
 * {@code dd oflag=direct} and {@code iflag=direct} move block-aligned data, the bytes are those the
 * host wrote, and an unaligned direct write is refused with EINVAL as the kernel refuses it.
 */
class FuseODirectTest {
    @TempDir
    Path dir;
    MountedImage mount;

    @BeforeEach
    void mount() throws Exception {
        MountedImage.assumeFuse();
        Path image = dir.resolve("disk.img");
        MountedImage.format(MountedImage.ADAPTER, image, 32L << 20);
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"));
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    @Test
    void ddWithODirectWritesAndReadsTheSameBytes() throws Exception {
        mount.sh("head -c 262144 /dev/urandom > ../source.bin");
        mount.sh("dd if=../source.bin of=direct.bin bs=64k oflag=direct status=none");
        mount.sh("dd if=../source.bin of=direct.bin bs=4k seek=3 skip=3 count=2 oflag=direct conv=notrunc status=none");
        assertThat(mount.sh("stat -c %s direct.bin")).isEqualTo("262144\n");
        mount.sh("dd if=direct.bin of=../back.bin bs=128k iflag=direct status=none && cmp ../source.bin ../back.bin");
        mount.sh("cmp ../source.bin direct.bin");
        mount.unmount();
        mount = MountedImage.mount(MountedImage.ADAPTER, dir.resolve("disk.img"), dir.resolve("mnt"));
        mount.sh("cmp ../source.bin direct.bin");
    }

    @Test
    void anUnalignedDirectWriteIsInvalid() throws Exception {
        MountedImage.ShellResult result = mount.shell(
                "head -c 1000 /dev/zero | dd of=odd.bin bs=1000 oflag=direct status=none");
        assertThat(result.exit()).isNotZero();
        assertThat(result.stderr()).contains("Invalid argument");
        assertThat(mount.sh("stat -c %s odd.bin")).as("nothing written").isEqualTo("0\n");
    }
}
