package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shell tools on a real mount produce the bytes they would on any filesystem, fail with the errno a
 * kernel filesystem gives, and everything is still there after unmount, fsck and remount.
 */
class FuseShellToolsTest {
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
        random = new byte[3 * 1024 * 1024 + 123];
        new Random(8).nextBytes(random);
        Files.write(dir.resolve("host.bin"), random);
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    private Path mnt(String name) {
        return mount.mountPoint.resolve(name);
    }

    @Test
    void shellToolsProduceTheExpectedBytesAndSurviveRemount() throws Exception {
        assertThat(mount.sh("printf 'hello\\n' > a.txt && cat a.txt")).isEqualTo("hello\n");
        mount.sh("mkdir -p d/e && cp a.txt d/e/b.txt && cmp a.txt d/e/b.txt");
        mount.sh("cp ../host.bin big.bin && cmp ../host.bin big.bin");
        assertThat(Files.readAllBytes(mnt("big.bin"))).isEqualTo(random);
        mount.sh("cat big.bin > ../catted.bin");
        assertThat(Files.readAllBytes(dir.resolve("catted.bin"))).isEqualTo(random);

        mount.sh("mv d/e/b.txt d/c.txt && mv d/e d/f && rm a.txt");
        assertThat(mount.sh("ls -A . d")).isEqualTo(".:\nbig.bin\nd\n\nd:\nc.txt\nf\n");
        assertThat(mount.sh("test ! -e a.txt && stat -c '%s %F' d/c.txt && stat -c %F d/f"))
                .isEqualTo("6 regular file\ndirectory\n");

        mount.sh("cp big.bin cut.bin && truncate -s 5000 cut.bin && truncate -s 1M cut.bin");
        byte[] cut = Files.readAllBytes(mnt("cut.bin"));
        assertThat(cut).hasSize(1 << 20);
        assertThat(Arrays.copyOf(cut, 5000)).isEqualTo(Arrays.copyOf(random, 5000));
        assertThat(Arrays.copyOfRange(cut, 5000, cut.length)).containsOnly(0);

        mount.sh("dd if=../host.bin of=dd.bin bs=4k count=100 conv=fdatasync status=none");
        mount.sh("dd if=/dev/zero of=dd.bin bs=4k seek=10 count=1 conv=notrunc,fdatasync status=none");
        mount.sh("dd if=../host.bin of=dd.bin bs=1k skip=7 seek=1001 count=3 conv=notrunc,fdatasync status=none");
        byte[] expected = Arrays.copyOf(random, 100 * 4096);
        Arrays.fill(expected, 10 * 4096, 11 * 4096, (byte) 0);
        expected = Arrays.copyOf(expected, 1004 * 1024);
        System.arraycopy(random, 7 * 1024, expected, 1001 * 1024, 3 * 1024);
        assertThat(Files.readAllBytes(mnt("dd.bin"))).isEqualTo(expected);
        assertThat(mount.sh("df -B4096 --output=fstype . | tail -1").strip()).isEqualTo("fuse.iomap");
        assertThat(mount.sh("printf 'more\\n' >> d/c.txt && cat d/c.txt")).isEqualTo("hello\nmore\n");
        mount.sh("cp big.bin open.bin && exec 3<open.bin && rm open.bin && cmp - ../host.bin <&3 && exec 3<&-");
        assertThat(mount.sh("ls -A")).isEqualTo("big.bin\ncut.bin\nd\ndd.bin\n");

        mount.unmount();
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"));
        assertThat(Files.readAllBytes(mnt("big.bin"))).isEqualTo(random);
        assertThat(Files.readAllBytes(mnt("dd.bin"))).isEqualTo(expected);
        assertThat(Files.readAllBytes(mnt("cut.bin"))).isEqualTo(cut);
        assertThat(mount.sh("cat d/c.txt")).isEqualTo("hello\nmore\n");
        mount.unmount();
    }

    /** Issue 13: {@code mv -n} and renameat2's RENAME_EXCHANGE reach the file system atomically. */
    @Test
    void mvNoClobberKeepsTheTargetAndRenameExchangeSwaps() throws Exception {
        mount.sh("printf old > a && printf target > b && mkdir d && printf inside > d/f");
        mount.shell("mv -n a b");
        assertThat(mount.sh("cat a; echo; cat b")).isEqualTo("old\ntarget");
        assumeTrue(MountedImage.onPath("python3"), "python3 for renameat2");
        String renameat2 = "import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True); "
                + "r = libc.syscall(316, -100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2); "
                + "sys.exit(0 if r == 0 else os.strerror(ctypes.get_errno()))";
        mount.sh("python3 -c '" + renameat2 + "' a b");
        assertThat(mount.sh("cat a; echo; cat b")).isEqualTo("target\nold");
        mount.sh("python3 -c '" + renameat2 + "' a d");
        assertThat(mount.sh("cat d; echo; cat a/f; echo; stat -c %F a")).isEqualTo("target\ninside\ndirectory\n");
        assertThat(mount.shell("python3 -c '" + renameat2 + "' a missing").stderr()).contains("No such file or directory");

        mount.unmount();
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"));
        assertThat(mount.sh("cat a/f; echo; cat b; echo; cat d")).isEqualTo("inside\nold\ntarget");
        mount.unmount();
    }

    @Test
    void mistakesGetTheErrnoOfAKernelFilesystem() throws Exception {
        mount.sh("mkdir d && touch d/f && printf x > file");
        assertThat(mount.shell("mkdir d").stderr()).contains("File exists");
        assertThat(mount.shell("rmdir d").stderr()).contains("Directory not empty");
        assertThat(mount.shell("cat missing").stderr()).contains("No such file or directory");
        assertThat(mount.shell("ls file/x").stderr()).contains("Not a directory");
        if (MountedImage.onPath("python3")) {
            assertThat(mount.shell("python3 -c 'import os; os.rename(\"d\", \"file\")'").stderr())
                    .contains("Not a directory");
        }
        assertThat(mount.shell("printf x > d").stderr()).contains("Is a directory");
        assertThat(mount.shell("touch \"$(printf 'n%.0s' {1..256})\"").stderr()).contains("File name too long");
        if (mount.capabilities().contains(dev.iomap.api.Capability.POSIX_ATTRIBUTES)) {
            assertThat(mount.sh("TZ=UTC touch -d 2001-01-01 file && stat -c %Y file")).isEqualTo("978307200\n");
        } else {
            assertThat(mount.shell("touch -d 2001-01-01 file").stderr()).as("explicit times without POSIX attributes")
                    .contains("Operation not supported");
        }

        var full = mount.shell("dd if=/dev/zero of=fill bs=1M count=64 status=none");
        assertThat(full.exit()).isNotZero();
        assertThat(full.stderr()).contains("No space left on device");
        mount.sh("rm fill && dd if=/dev/zero of=again bs=1M count=4 conv=fdatasync status=none");

        if (mount.fallocateTool()) {
            mount.sh("fallocate -l 1M falloc.bin && test \"$(stat -c %s falloc.bin)\" = 1048576");
            mount.sh("cp ../host.bin holes.bin && fallocate -p -o 4096 -l 8192 holes.bin");
            byte[] holes = Files.readAllBytes(mnt("holes.bin"));
            assertThat(Arrays.copyOfRange(holes, 4096, 12288)).containsOnly(0);
            assertThat(Arrays.copyOfRange(holes, 12288, holes.length))
                    .isEqualTo(Arrays.copyOfRange(random, 12288, random.length));
            assertThat(mount.shell("fallocate -c -o 0 -l 4096 holes.bin").stderr())
                    .contains("Operation not supported");
        }
        mount.unmount();
    }
}
