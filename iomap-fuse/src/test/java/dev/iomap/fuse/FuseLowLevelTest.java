package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What libfuse's low-level API gives a real mount (issue 37): a hard link is one kernel inode, an
 * unlinked open file needs no hidden name, and a write by a user without {@code CAP_FSETID} clears
 * set-user-ID ({@code FUSE_HANDLE_KILLPRIV_V2}). With default options: the kernel caches attributes.
 */
class FuseLowLevelTest {
    @TempDir
    Path dir;
    Path image;
    MountedImage mount;

    @BeforeEach
    void format() throws Exception {
        MountedImage.assumeFuse();
        image = dir.resolve("disk.img");
        MountedImage.format(MountedImage.ADAPTER, image, 32L << 20);
    }

    private void mount(FuseMountOptions options) throws Exception {
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"), options);
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    /** Before: each name its own kernel inode (the path API), so `stat -c %i` could not be trusted to agree. */
    @Test
    void twoHardLinksAreOneInodeWithOneLinkCount() throws Exception {
        mount(FuseMountOptions.defaults());
        assumeTrue(mount.capabilities().contains(Capability.HARD_LINKS), MountedImage.ADAPTER + " has no hard links");
        String out = mount.sh("echo data > a; stat -c %i a >/dev/null; ln a b; stat -c '%i %h' a b; "
                + "echo more >> b; cat a; rm a; stat -c %h b");
        String[] lines = out.split("\n");
        assertThat(lines[0]).isEqualTo(lines[1]);
        assertThat(lines[0]).endsWith(" 2");
        assertThat(lines[0].split(" ")[0]).isEqualTo(Long.toString(mount.stat("/b").ino()));
        assertThat(lines[2]).isEqualTo("data");
        assertThat(lines[3]).isEqualTo("more");
        assertThat(lines[4]).as("after rm a").isEqualTo("1");
        mount.unmount();
    }

    /** Before: libfuse's high-level API renamed the file to .fuse_hiddenNNNN until it was closed. */
    @Test
    void anUnlinkedOpenFileLeavesNoHiddenName() throws Exception {
        mount(FuseMountOptions.defaults());
        String out = mount.sh("exec 3<>f; echo written >&3; rm f; ls -a; echo ---; echo again >&3; "
                + "cat /proc/self/fd/3 2>/dev/null || true; stat -L -c %h /proc/$$/fd/3; exec 3>&-; ls -a");
        assertThat(out).doesNotContain(".fuse_hidden");
        assertThat(out.split("---\n")[0]).isEqualTo(".\n..\n");
        assertThat(out).contains("\n0\n");
        assertThat(out).endsWith(".\n..\n");
        mount.unmount();
    }

    /** A missing name is cached as missing (a negative entry), and every change through the mount shows at once. */
    @Test
    void aMissingNameIsSeenAsCreatedRemovedAndRenamedAtOnce() throws Exception {
        mount(FuseMountOptions.defaults());
        String out = mount.sh("test -e x || echo missing; test -e x || echo still; echo a > x; cat x; rm x; "
                + "test -e x || echo gone; mkdir x; test -d x && echo dir; mv x y; test -e x || echo moved; "
                + "test -d y && echo there");
        assertThat(out).isEqualTo("missing\nstill\na\ngone\ndir\nmoved\nthere\n");
        mount.unmount();
    }

    /** Before: a direct-I/O write by a user without CAP_FSETID left set-user-ID on the file. */
    @Test
    void aWriteByAnotherUserClearsSetUserId() throws Exception {
        assumeTrue(MountedImage.run(Path.of("/"), List.of("id", "-u")).stdout().strip().equals("0"),
                "writing as another user needs root");
        assumeTrue(MountedImage.onPath("setpriv"), "setpriv (util-linux) is not installed");
        mount(FuseMountOptions.defaults().withFuseOptions(List.of("allow_other")));
        assumeTrue(mount.capabilities().contains(Capability.POSIX_ATTRIBUTES),
                MountedImage.ADAPTER + " keeps no modes");
        java.nio.file.Files.setPosixFilePermissions(dir,
                java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
        String out = mount.sh("echo x > s; chmod 06777 s; stat -c %a s; "
                + "setpriv --reuid=65534 --regid=65534 --clear-groups -- sh -c 'echo y >> s'; stat -c %a s; "
                + "echo z >> s; chmod 04755 s; echo w >> s; stat -c %a s");
        assertThat(out.split("\n")).containsExactly("6777", "777", "4755");
        assertThat(mount.stat("/s").mode()).isEqualTo(04755);
        mount.unmount();
    }
}
