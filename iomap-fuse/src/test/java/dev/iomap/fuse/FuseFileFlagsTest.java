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
 * {@code lsattr} and {@code chattr} (FS_IOC_GETFLAGS and FS_IOC_SETFLAGS through FUSE's ioctl) on a
 * real mount of each adapter. An adapter without {@link Capability#JOURNALED_DATA} shows no flags and
 * refuses {@code chattr +j} with EOPNOTSUPP, as ext2 refuses it (every adapter refuses {@code +c},
 * compression, which none keeps); one with it (gfs2-like) keeps the flag
 * per inode, a directory's flag is inherited by what is created in it, and the flags are still there
 * after unmount. Every other ioctl is ENOTTY, as on a filesystem that does not know the command.
 * Needs e2fsprogs (lsattr, chattr) and python3.
 */
class FuseFileFlagsTest {
    /** Prints the errno name a python statement fails with, or its value. */
    private static final String ENOTTY_PROBE = "python3 -c 'import errno, fcntl, os\n"
            + "fd = os.open(\"f\", os.O_RDONLY)\n"
            + "try:\n"
            + "    fcntl.ioctl(fd, 0x80087601, bytes(8))\n"  // FS_IOC_GETVERSION: not a flags ioctl
            + "    print(\"no error\")\n"
            + "except OSError as e:\n"
            + "    print(errno.errorcode[e.errno])\n"
            + "'";

    @TempDir
    Path dir;
    MountedImage mount;

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    private void mount(String adapter) throws Exception {
        MountedImage.assumeFuse();
        assumeTrue(MountedImage.onPath("lsattr") && MountedImage.onPath("chattr"),
                "lsattr and chattr (e2fsprogs) are not installed");
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, 32L << 20);
        mount = MountedImage.mount(adapter, image, dir.resolve("mnt"));
        mount.sh("printf data > f && mkdir d");
    }

    @ParameterizedTest
    @ValueSource(strings = {"xfs-like", "snapfs", "gfs2-like", "bcachefs-like"})
    void lsattrAndChattrSeeTheInodeFlags(String adapter) throws Exception {
        mount(adapter);

        assertThat(mount.sh("lsattr f && lsattr -d d")).matches("-+ f\n-+ d\n");
        assertThat(mount.sh(ENOTTY_PROBE)).isEqualTo("ENOTTY\n");
        boolean journaled = mount.capabilities().contains(Capability.JOURNALED_DATA);
        if (!journaled) {
            assertThat(mount.sh("chattr +j f 2>&1 || echo status=$?"))
                    .isEqualTo("chattr: Operation not supported while setting flags on f\nstatus=1\n");
            assertThat(mount.sh("chattr +c f 2>&1 || echo status=$?"))
                    .isEqualTo("chattr: Operation not supported while setting flags on f\nstatus=1\n");
            assertThat(mount.sh("chattr -j f && lsattr f")).matches("-+ f\n");
        } else {
            mount.sh("chattr +j f && chattr +j d && printf more > d/g");
            assertThat(mount.sh("lsattr f d/g && lsattr -d d")).matches("-*j-* f\n-*j-* d/g\n-*j-* d\n");
            assertThat(mount.sh("chattr +c f 2>&1 || echo status=$?"))
                    .isEqualTo("chattr: Operation not supported while setting flags on f\nstatus=1\n");
            assertThat(mount.sh("chattr -j f && lsattr f && cat f d/g")).matches("-+ f\ndatamore");
            assertThat(mount.sh("lsattr d/g && lsattr -d d")).as("chattr -j f leaves the others' flags")
                    .matches("-*j-* d/g\n-*j-* d\n");
        }
        mount.unmount();
        if (journaled) {
            try (MountedImage.Reopened again = MountedImage.reopen(adapter, mount.image)) {
                assertThat(again.fs().getFileFlags("/f")).as("after unmount: f").isEmpty();
                assertThat(again.fs().getFileFlags("/d")).as("after unmount: d").containsExactly(FileFlag.JOURNAL_DATA);
                assertThat(again.fs().getFileFlags("/d/g")).as("after unmount: d/g")
                        .containsExactly(FileFlag.JOURNAL_DATA);
            }
        }
    }
}
