package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.FileFlag;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code chattr +i}, {@code +a}, {@code +S}, {@code +d}, {@code +A} and {@code xfs_io chattr +x} on a real
 * mount of each adapter with {@link Capability#INODE_FLAGS}, through the kernel: the flags show in
 * {@code lsattr} and {@code xfs_io lsattr}, survive an unmount, and the shell's writes, removals, renames,
 * links and mode changes of an immutable or append-only file fail with EPERM while reads and appends
 * work; the kernel itself refuses {@code chattr +i} and {@code -i} without {@code CAP_LINUX_IMMUTABLE}
 * (xfstests generic/545, 555), asking the mount for the flags as they are. Needs e2fsprogs, xfsprogs
 * ({@code xfs_io}) and libcap2-bin ({@code capsh}).
 */
class FuseInodeFlagsTest {
    private static final String DENIED = "Operation not permitted";

    @TempDir
    Path dir;
    MountedImage mount;

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    /** @return the flag letters {@code lsattr} shows for {@code name}, sorted */
    private String letters(String options, String name) throws Exception {
        return mount.sh("lsattr " + options + " " + name + " | cut -d' ' -f1 | tr -d '-' | fold -w1 | sort | tr -d '\\n'");
    }

    /** @return "denied" if {@code command} failed with EPERM, else what it printed and its status */
    private String attempt(String command) throws Exception {
        MountedImage.ShellResult result = mount.shell(command);
        return result.exit() != 0 && result.stderr().contains(DENIED) ? "denied"
                : "status " + result.exit() + ": " + result.stdout() + result.stderr();
    }

    @ParameterizedTest
    @ValueSource(strings = {"xfs-like", "gfs2-like", "bcachefs-like"})
    void immutableAndAppendOnlyFilesAreEnforcedThroughTheKernel(String adapter) throws Exception {
        MountedImage.assumeFuse();
        for (String tool : new String[] {"lsattr", "chattr", "capsh"}) {
            assumeTrue(MountedImage.onPath(tool), tool + " is not installed");
        }
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, 32L << 20);
        mount = MountedImage.mount(adapter, image, dir.resolve("mnt"));
        assumeTrue(mount.capabilities().contains(Capability.INODE_FLAGS), adapter + " keeps no inode flags");
        mount.sh("printf data > f && mkdir d && printf x > d/inside");
        assertThat(mount.sh("c1=$(stat -c %z f); chattr +A f; c2=$(stat -c %z f); chattr -A f; "
                + "[ \"$c1\" != \"$c2\" ] && echo changed")).as("the kernel's cached ctime is dropped (generic/277)")
                .isEqualTo("changed\n");

        mount.sh("chattr +i f");
        assertThat(letters("", "f")).isEqualTo("i");
        assertThat(attempt("printf x >> f")).isEqualTo("denied");
        assertThat(attempt("printf x > f")).isEqualTo("denied");
        assertThat(attempt("rm -f f")).isEqualTo("denied");
        assertThat(attempt("mv f g")).isEqualTo("denied");
        assertThat(attempt("ln f h")).isEqualTo("denied");
        assertThat(attempt("chmod 600 f")).isEqualTo("denied");
        assertThat(attempt("touch f")).isEqualTo("denied");
        assertThat(attempt("truncate -s 0 f")).isEqualTo("denied");
        assertThat(attempt("capsh --drop=cap_linux_immutable -- -c 'chattr -i f'")).isEqualTo("denied");
        assertThat(attempt("capsh --drop=cap_linux_immutable -- -c 'chattr +a d/inside'")).isEqualTo("denied");
        assertThat(mount.sh("cat f && ls")).isEqualTo("datad\nf\n");

        mount.sh("chattr -i f && chattr +a f");
        assertThat(letters("", "f")).isEqualTo("a");
        mount.sh("printf more >> f");
        assertThat(attempt("printf x > f")).isEqualTo("denied");
        assertThat(attempt("rm -f f")).isEqualTo("denied");
        assertThat(attempt("touch -d @0 f")).isEqualTo("denied");
        mount.sh("touch f");
        assertThat(mount.sh("cat f")).isEqualTo("datamore");

        mount.sh("chattr +i d");
        assertThat(attempt("printf y > d/new")).isEqualTo("denied");
        assertThat(attempt("rm d/inside")).isEqualTo("denied");
        mount.sh("printf y >> d/inside && chattr -i d && chattr +SdA d && printf z > d/child");
        assertThat(letters("-d", "d")).isEqualTo("ASd");
        assertThat(letters("", "d/child")).as("inherited").isEqualTo("ASd");
        if (MountedImage.onPath("xfs_io")) {
            mount.sh("xfs_io -c 'chattr +x' d && printf w > d/dax");
            assertThat(mount.sh("xfs_io -c 'lsattr -v' d/dax")).contains("dax");
        }

        mount.unmount();
        try (MountedImage.Reopened again = MountedImage.reopen(adapter, mount.image)) {
            assertThat(again.fs().getFileFlags("/f")).containsExactly(FileFlag.APPEND);
            assertThat(again.fs().getFileFlags("/d/child")).containsExactlyInAnyOrder(FileFlag.SYNC,
                    FileFlag.NO_DUMP, FileFlag.NO_ATIME);
        }
    }
}
