package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.NewInodeAttributes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Symbolic links, hard links, mode, owner, nanosecond times and extended attributes through the
 * kernel on a real mount, with the results the same calls give on a local Linux filesystem, and
 * everything still there through the Java API after unmount (and fsck clean). Each test needs the
 * adapter to declare the capabilities it exercises; chown and the permission checks need root.
 */
class FuseLinksTest {
    /** Each argument is a Python statement; prints each statement's value, or the errno's name it failed with. */
    private static final String PY = "python3 -c 'import errno, os, sys\n"
            + "for stmt in sys.argv[1:]:\n"
            + "    try:\n"
            + "        print(eval(stmt))\n"
            + "    except OSError as e:\n"
            + "        print(errno.errorcode[e.errno])\n"
            + "' ";

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

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    private void mount(FuseMountOptions options, Capability... needed) throws Exception {
        Set<Capability> missing = EnumSet.noneOf(Capability.class);
        missing.addAll(List.of(needed));
        try (var unmounted = MountedImage.reopen(MountedImage.ADAPTER, image)) {
            missing.removeAll(unmounted.fs().capabilities());
        }
        assumeTrue(missing.isEmpty(), MountedImage.ADAPTER + " does not declare " + missing
                + " on this branch (the adapter's links and attributes are another branch's work)");
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"), options);
    }

    private static String py(String... statements) {
        var command = new StringBuilder(PY);
        for (String statement : statements) {
            command.append(" '").append(statement.replace("'", "'\\''")).append('\'');
        }
        return command.toString();
    }

    private static void assumeRoot() throws Exception {
        assumeTrue(MountedImage.run(Path.of("/"), List.of("id", "-u")).stdout().strip().equals("0"),
                "chown and permission checks as another user need root");
    }

    @Test
    void symbolicAndHardLinksBehaveAsOnALocalFilesystem() throws Exception {
        mount(FuseMountOptions.defaults(), Capability.SYMLINKS, Capability.HARD_LINKS);
        String longTarget = "t".repeat(200) + "/" + "u".repeat(200) + "/" + "v".repeat(200);
        mount.sh("printf data > f && ln -s f s && ln -s ../nowhere dangling && ln f h && mkdir d"
                + " && ln -s ../f d/up && ln -s " + longTarget + " long && ln -s loop2 loop1 && ln -s loop1 loop2");
        assertThat(mount.sh("readlink s dangling d/up && cat s d/up && echo")).isEqualTo("f\n../nowhere\n../f\ndatadata\n");
        assertThat(mount.sh("readlink long")).isEqualTo(longTarget + "\n");
        String[] inodes = mount.sh("stat -c %i f h").split("\n");
        assertThat(inodes[0]).as("one inode number for both names (use_ino)").isEqualTo(inodes[1]);
        assertThat(mount.sh("stat -c '%h %F %s' f h && stat -c '%F %s %a' s long"))
                .isEqualTo("2 regular file 4\n2 regular file 4\nsymbolic link 1 777\nsymbolic link 602 777\n");
        assertThat(mount.sh("stat -L -c '%F %s' s && ls d && ls -l d | tail -1 | sed 's/.* up/up/'"))
                .isEqualTo("regular file 4\nup\nup -> ../f\n");
        assertThat(mount.sh(py("os.readlink(\"f\")", "os.open(\"loop1\", os.O_RDONLY)", "os.link(\"d\", \"d2\")",
                "os.stat(\"dangling\")", "os.link(\"f\", \"h\")", "os.symlink(\"x\", \"f\")")))
                .isEqualTo("EINVAL\nELOOP\nEPERM\nENOENT\nEEXIST\nEEXIST\n");
        mount.sh("printf more >> h && rm f && mv h f2 && ln -s f2 s2");
        assertThat(mount.sh("cat s2 && echo && stat -c %h f2 && test ! -e s && test -L s")).isEqualTo("datamore\n1\n");
        mount.unmount();

        try (var image = MountedImage.reopen(MountedImage.ADAPTER, this.image)) {
            assertThat(image.fs().readSymbolicLink("/s")).isEqualTo("f");
            assertThat(image.fs().readSymbolicLink("/long")).isEqualTo(longTarget);
            assertThat(image.fs().lstat("/s2").isSymbolicLink()).isTrue();
            assertThat(image.fs().stat("/s2").size()).as("followed").isEqualTo(8);
            assertThat(image.fs().stat("/f2").linkCount()).isEqualTo(1);
            assertThat(image.fs().stat("/f2").ino()).as("st_ino is the file system's").isEqualTo(Long.parseLong(inodes[0]));
        }
    }

    @Test
    void fifosDeviceNodesAndSocketsAreMadeListedCopiedAndKept() throws Exception {
        assumeRoot();
        mount(FuseMountOptions.defaults(), Capability.SPECIAL_FILES, Capability.POSIX_ATTRIBUTES);
        mount.sh("umask 022 && mkdir d && mkfifo -m 640 d/p && mknod d/c c 1 3 && mknod -m 600 d/b b 7 300"
                + " && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"d/s\")'");
        assertThat(mount.sh("cd d && stat -c '%n %F %a %t %T %s' p c b s"))
                .isEqualTo("p fifo 640 0 0 0\nc character special file 644 1 3 0\nb block special file 600 7 12c 0\n"
                        + "s socket 755 0 0 0\n");
        assertThat(mount.sh("ls -l d | cut -c1 | sort | tr -d '\\n'")).isEqualTo("bcpst");
        assertThat(mount.sh("(echo through-the-pipe > d/p &) && cat d/p")).isEqualTo("through-the-pipe\n");
        assertThat(mount.sh("echo gone > d/c && head -c 4 d/c | wc -c")).as("root's mount takes mount(8)'s dev:"
                + " the node is /dev/null").isEqualTo("0\n");
        assertThat(mount.sh("findmnt -n -o OPTIONS -T .")).doesNotContain("nodev").doesNotContain("nosuid");
        // renameat2(RENAME_WHITEOUT), as overlayfs asks it of its upper file system
        mount.sh("printf lower > w && python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
                + " assert libc.renameat2(-100, b\"w\", -100, b\"w2\", 4) == 0, ctypes.get_errno()'");
        assertThat(mount.sh("stat -c '%F %t %T %a %u' w && cat w2")).isEqualTo("character special file 0 0 0 0\nlower");
        assertThat(mount.sh(py("os.open(\"d/c2\", os.O_RDONLY)", "os.mknod(\"d/p\", 0o10644)")))
                .isEqualTo("ENOENT\nEEXIST\n");
        mount.sh("cp -a d e && tar -cf t.tar d && mkdir x && tar -C x -xf t.tar && ln d/c c-link && mv d/b b2 && rm d/s");
        assertThat(mount.sh("stat -c '%n %F %a %t %T' e/p e/c e/b x/d/p x/d/c b2 && stat -c %h c-link"))
                .isEqualTo("e/p fifo 640 0 0\ne/c character special file 644 1 3\ne/b block special file 600 7 12c\n"
                        + "x/d/p fifo 640 0 0\nx/d/c character special file 644 1 3\nb2 block special file 600 7 12c\n2\n");
        mount.unmount();

        try (var image = MountedImage.reopen(MountedImage.ADAPTER, this.image)) {
            assertThat(image.fs().lstat("/d/p").type()).isEqualTo(dev.iomap.api.FileType.FIFO);
            assertThat(image.fs().lstat("/c-link").rdev()).isEqualTo(dev.iomap.api.DeviceNumber.of(1, 3));
            assertThat(image.fs().lstat("/b2").rdev()).isEqualTo(dev.iomap.api.DeviceNumber.of(7, 300));
            assertThat(image.fs().lstat("/e/b").type()).isEqualTo(dev.iomap.api.FileType.BLOCK_DEVICE);
            assertThat(image.fs().readdir("/d")).extracting(dev.iomap.api.DirEntry::name)
                    .containsExactlyInAnyOrder("p", "c");
        }
    }

    @Test
    void modeOwnerAndNanosecondTimesAreStoredAndReported() throws Exception {
        assumeRoot();
        mount(FuseMountOptions.defaults(), Capability.POSIX_ATTRIBUTES);
        long before = Instant.now().getEpochSecond();
        mount.sh("umask 027 && touch f && mkdir e && touch e/g && mkdir -m 2770 s && touch s/h && mkdir s/sub");
        assertThat(mount.sh("stat -c '%a %u %g' f e e/g s")).isEqualTo("640 0 0\n750 0 0\n640 0 0\n2770 0 0\n");
        assertThat(mount.sh("stat -c '%h %s' f")).isEqualTo("1 0\n");
        mount.sh("chmod 4751 f && chgrp 99 s && umask 027 && touch s/i && mkdir s/sub2");
        assertThat(mount.sh("stat -c '%a' f")).isEqualTo("4751\n");
        assertThat(mount.sh("stat -c '%a %g' s/i s/sub2")).as("set-group-ID directory: its group, and the bit")
                .isEqualTo("640 99\n2750 99\n");
        mount.sh("chown 1234:5678 f");
        assertThat(mount.sh("stat -c '%a %u %g' f")).as("chown clears set-user-ID, as on Linux")
                .isEqualTo("751 1234 5678\n");
        mount.sh("chown :42 f && chown 7 e/g");
        assertThat(mount.sh("stat -c '%u %g' f e/g")).isEqualTo("1234 42\n7 0\n");

        mount.sh("TZ=UTC touch -d '2001-02-03 04:05:06.123456789' f && TZ=UTC touch -a -d '2002-01-01 00:00:00.5' e/g");
        assertThat(mount.sh("TZ=UTC stat -c '%x|%y' f && TZ=UTC stat -c '%x' e/g")).isEqualTo(
                "2001-02-03 04:05:06.123456789 +0000|2001-02-03 04:05:06.123456789 +0000\n"
                        + "2002-01-01 00:00:00.500000000 +0000\n");
        assertThat(mount.sh("stat -c '%X %Y' f")).isEqualTo("981173106 981173106\n");
        long ctime = Long.parseLong(mount.sh("stat -c %Z f").strip());
        assertThat(ctime).as("ctime is the time of the last change").isBetween(before, Instant.now().getEpochSecond());
        mount.sh("touch e/g");
        long mtime = Long.parseLong(mount.sh("stat -c %Y e/g").strip());
        assertThat(mtime).as("touch: now").isBetween(before, Instant.now().getEpochSecond());
        mount.unmount();

        try (var image = MountedImage.reopen(MountedImage.ADAPTER, this.image)) {
            var f = image.fs().stat("/f");
            assertThat(f.mode()).isEqualTo(0751);
            assertThat(f.uid()).isEqualTo(1234);
            assertThat(f.gid()).isEqualTo(42);
            assertThat(f.mtime()).isEqualTo(Instant.parse("2001-02-03T04:05:06.123456789Z"));
            assertThat(f.atime()).isEqualTo(Instant.parse("2001-02-03T04:05:06.123456789Z"));
            assertThat(image.fs().stat("/s/sub2").mode()).isEqualTo(02750);
        }
    }

    @Test
    void newFilesBelongToTheCallerAndTheKernelChecksPermissionsFromTheStoredAttributes() throws Exception {
        assumeRoot();
        assumeTrue(MountedImage.onPath("setpriv"), "setpriv (util-linux) runs a command as another user");
        mount(FuseMountOptions.defaults().withFuseOptions(List.of("allow_other")), Capability.POSIX_ATTRIBUTES,
                Capability.SYMLINKS);
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
        mount.sh("mkdir open && chmod 777 open && mkdir closed && chmod 755 closed && printf s > secret"
                + " && chmod 600 secret");
        String as1234 = "setpriv --reuid=1234 --regid=5678 --clear-groups -- ";
        mount.sh(as1234 + "bash -c 'umask 022 && touch open/mine && mkdir open/md && ln -s x open/ml'");
        assertThat(mount.sh("stat -c '%u %g %a %F' open/mine open/md open/ml")).isEqualTo(
                "1234 5678 644 regular empty file\n1234 5678 755 directory\n1234 5678 777 symbolic link\n");
        var denied = mount.shell(as1234 + "touch closed/x");
        assertThat(denied.exit()).isNotZero();
        assertThat(denied.stderr()).contains("Permission denied");
        denied = mount.shell(as1234 + "cat secret");
        assertThat(denied.exit()).isNotZero();
        assertThat(denied.stderr()).contains("Permission denied");
        denied = mount.shell(as1234 + "chmod 777 secret");
        assertThat(denied.stderr()).contains("Operation not permitted");
        assertThat(mount.sh("stat -c %a secret && cat secret")).isEqualTo("600\ns");
        mount.unmount();

        try (var image = MountedImage.reopen(MountedImage.ADAPTER, this.image)) {
            var mine = image.fs().stat("/open/mine");
            assertThat(new NewInodeAttributes(mine.mode(), mine.uid(), mine.gid()))
                    .isEqualTo(new NewInodeAttributes(0644, 1234, 5678));
        }
    }

    @Test
    void extendedAttributesWithFlagsProbingAndTheKernelsErrnos() throws Exception {
        mount(FuseMountOptions.defaults(), Capability.XATTRS, Capability.SYMLINKS);
        mount.sh("touch f && ln -s f s");
        assertThat(mount.sh(py("os.setxattr(\"f\", \"user.a\", b\"hello\")", "os.getxattr(\"f\", \"user.a\")",
                "os.setxattr(\"f\", \"user.big\", b\"b\" * 200)", "len(os.getxattr(\"f\", \"user.big\"))",
                "os.setxattr(\"f\", \"user.a\", b\"x\", os.XATTR_CREATE)",
                "os.setxattr(\"f\", \"user.zz\", b\"x\", os.XATTR_REPLACE)",
                "os.setxattr(\"f\", \"user.a\", b\"bye\", os.XATTR_REPLACE)", "os.getxattr(\"f\", \"user.a\")",
                "os.setxattr(\"f\", \"user.e\", b\"\", os.XATTR_CREATE)", "os.getxattr(\"f\", \"user.e\")",
                "sorted(os.listxattr(\"f\"))", "os.removexattr(\"f\", \"user.e\")", "os.getxattr(\"f\", \"user.e\")",
                "os.removexattr(\"f\", \"user.e\")", "os.setxattr(\"f\", \"user.\" + \"n\" * 251, b\"1\")",
                "os.setxattr(\"f\", \"user.max\", b\"m\" * 65536)", "os.setxattr(\"f\", \"user.over\", b\"m\" * 65537)",
                "os.setxattr(\"s\", \"user.x\", b\"1\", follow_symlinks=False)",
                "os.getxattr(\"s\", \"user.a\")")))
                .isEqualTo("None\nb'hello'\nNone\n200\nEEXIST\nENODATA\nNone\nb'bye'\nNone\nb''\n"
                        + "['user.a', 'user.big', 'user.e']\nNone\nENODATA\nENODATA\nERANGE\nNone\nE2BIG\nEPERM\n"
                        + "b'bye'\n");
        mount.unmount();

        try (var image = MountedImage.reopen(MountedImage.ADAPTER, this.image)) {
            assertThat(image.fs().listXattrs("/f")).containsExactly("user.a", "user.big", "user.max");
            assertThat(image.fs().getXattr("/f", "user.a")).isEqualTo("bye".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            assertThat(image.fs().getXattr("/f", "user.max")).hasSize(65536);
        }
    }
}
