package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The mount helper {@code bin/iomap install-mount-helper DIR} writes ({@code mount.fuse.iomap}), called as
 * {@code mount(8)} calls it for {@code mount -t fuse.iomap IMAGE DIR -o OPTIONS} and for an fstab line
 * ({@code SOURCE TARGET -o LIST}, mount(8)'s own options such as {@code defaults} in the list): it returns
 * once the image is mounted (the mount detached, status 0), the kernel lists the mount with the image's
 * path as its source and {@code fuse.iomap} as its type, and {@code umount} followed at once by the helper
 * again always mounts (the new mount waits for the old process to let go of the image), keeping what was
 * written. The helper runs {@code bin/iomap} of this checkout on the test class path
 * ({@code IOMAP_CLI_CLASSPATH}). Remounts: {@code -Dmount.remounts=N} (default 3; issue 38 asks 100 once).
 * Every mount still mounted is lazily unmounted after the test and every process it left is stopped.
 * Each command is bounded ({@link #WAIT_SECONDS}), so the loop has no timeout of its own (100 rounds take
 * about 10 minutes on a loaded machine).
 */
class MountHelperTest {
    private static final long WAIT_SECONDS = 60;
    private static final int REMOUNTS = Integer.getInteger("mount.remounts", 3);
    private static final boolean MOUNT_ENVIRONMENT = true;

    @TempDir
    Path dir;

    private final List<Path> mountPoints = new ArrayList<>();
    private final List<Path> images = new ArrayList<>();

    @AfterEach
    void leaveNothingBehind() throws Exception {
        for (Path mountPoint : mountPoints) {
            if (ProcessMounts.line(mountPoint) != null) {
                new ProcessBuilder("fusermount3", "-u", "-z", mountPoint.toString()).inheritIO().start()
                        .waitFor(10, TimeUnit.SECONDS);
            }
        }
        for (Path image : images) {
            for (ProcessHandle holder : holders(image)) {
                holder.destroy();
                holder.onExit().get(15, TimeUnit.SECONDS);
            }
        }
    }

    @ParameterizedTest
    @Timeout(300)
    @ValueSource(strings = {"xfs-like", "gfs2-like", "bcachefs-like"})
    void theHelperMountsEachAdapterAsMountWouldAndReturnsOnceMounted(String adapter) throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        Path image = image(adapter);
        Path mountPoint = mountPoint("mnt");
        Path helper = installHelper();

        mount(helper, image, mountPoint, "defaults,noauto,adapter=" + adapter + ",allow_other,log=" + dir.resolve("log"));

        assertThat(ProcessMounts.line(mountPoint)).as("the mount's type and source")
                .contains(" - fuse.iomap " + image + " ");
        Files.writeString(mountPoint.resolve("f"), adapter);
        unmount(mountPoint);
        awaitFsckClean(image);
    }

    @Test
    void umountThenMountAgainAlwaysMountsAndKeepsWhatWasWritten() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        Path image = image("xfs-like");
        Path mountPoint = mountPoint("mnt");
        Path helper = installHelper();
        String options = "rw,adapter=xfs-like,log=" + dir.resolve("log");

        for (int round = 0; round < REMOUNTS; round++) {
            mount(helper, image, mountPoint, options);
            if (round > 0) {
                assertThat(Files.readString(mountPoint.resolve("round"))).as("round %d", round)
                        .isEqualTo(Integer.toString(round - 1));
            }
            Files.writeString(mountPoint.resolve("round"), Integer.toString(round));
            unmount(mountPoint);   // the next round mounts at once, while this mount may still be closing
        }
        awaitFsckClean(image);
    }

    /**
     * {@code mount -o remount,ro DIR} (xfstests' {@code _scratch_remount ro}) reaches the helper with the
     * mount in place: the kernel changes the flags of that mount (no second iomap mount of the image,
     * which would wait for it and be refused as busy), and {@code remount,rw} makes it writable again.
     */
    @Test
    @Timeout(300)
    void aRemountChangesTheMountThatIsThere() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        assumeTrue("root".equals(System.getProperty("user.name")), "mount -o remount needs root");
        Path image = image("xfs-like");
        Path mountPoint = mountPoint("mnt");
        Path helper = installHelper();
        mount(helper, image, mountPoint, "rw,adapter=xfs-like,log=" + dir.resolve("log"));
        Files.writeString(mountPoint.resolve("f"), "before");

        run(List.of(helper.toString(), image.toString(), mountPoint.toString(), "-o", "remount,ro"));
        assertThat(ProcessMounts.line(mountPoint).split(" ")[5]).as("the mount's own options").startsWith("ro");
        assertThatThrownBy(() -> Files.writeString(mountPoint.resolve("g"), "refused"))
                .isInstanceOf(java.nio.file.FileSystemException.class).hasMessageContaining("Read-only");
        assertThat(Files.readString(mountPoint.resolve("f"))).isEqualTo("before");

        run(List.of(helper.toString(), image.toString(), mountPoint.toString(), "-o", "remount,rw"));
        assertThat(ProcessMounts.line(mountPoint).split(" ")[5]).startsWith("rw");
        Files.writeString(mountPoint.resolve("g"), "after");
        unmount(mountPoint);
        awaitFsckClean(image);
    }

    /**
     * {@code mount -t fuse.iomap -o ro} (xfstests generic/003 mounts {@code ro,strictatime} and lists a
     * directory): the mount changes not one byte of the image, updates no access time (Linux's
     * {@code touch_atime} skips a read-only mount; the mount updated it in memory and wrote it back before),
     * and refuses writes. A {@code remount,ro} of a writable mount is
     * {@link #aRemountToReadOnlyUpdatesNoAccessTime}.
     */
    @Test
    @Timeout(300)
    void aReadOnlyMountChangesNotOneByteOfTheImageAndUpdatesNoAccessTime() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        Path image = image("xfs-like");
        Path mountPoint = mountPoint("mnt");
        Path helper = installHelper();
        mount(helper, image, mountPoint, "rw,adapter=xfs-like,log=" + dir.resolve("log"));
        Files.createDirectory(mountPoint.resolve("d"));
        Files.writeString(mountPoint.resolve("d/f"), "data");
        unmount(mountPoint);
        awaitFsckClean(image);
        byte[] before = Files.readAllBytes(image);

        mount(helper, image, mountPoint, "ro,strictatime,attr_timeout=0,adapter=xfs-like,log=" + dir.resolve("log"));
        assertThat(ProcessMounts.line(mountPoint).split(" ")[5]).as("the mount's own options").startsWith("ro");
        FileTime directory = accessTime(mountPoint.resolve("d"));
        FileTime file = accessTime(mountPoint.resolve("d/f"));
        Thread.sleep(20);
        try (var listing = Files.list(mountPoint.resolve("d"))) {
            assertThat(listing.map(p -> p.getFileName().toString())).containsExactly("f");
        }
        assertThat(Files.readString(mountPoint.resolve("d/f"))).isEqualTo("data");
        assertThat(accessTime(mountPoint.resolve("d"))).as("the directory's access time").isEqualTo(directory);
        assertThat(accessTime(mountPoint.resolve("d/f"))).as("the file's access time").isEqualTo(file);
        assertThatThrownBy(() -> Files.writeString(mountPoint.resolve("g"), "refused"))
                .isInstanceOf(java.nio.file.FileSystemException.class).hasMessageContaining("Read-only");
        unmount(mountPoint);
        awaitFsckClean(image);

        assertThat(Files.readAllBytes(image)).as("the image after a read-only mount").isEqualTo(before);
    }

    /** {@code mount -o remount,ro} of a writable mount: from then on, no access time is updated either. */
    @Test
    @Timeout(300)
    void aRemountToReadOnlyUpdatesNoAccessTime() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        assumeTrue("root".equals(System.getProperty("user.name")), "mount -o remount needs root");
        Path image = image("xfs-like");
        Path mountPoint = mountPoint("mnt");
        Path helper = installHelper();
        mount(helper, image, mountPoint, "rw,strictatime,attr_timeout=0,adapter=xfs-like,log=" + dir.resolve("log"));
        Files.createDirectory(mountPoint.resolve("d"));
        Files.writeString(mountPoint.resolve("d/f"), "data");
        FileTime written = accessTime(mountPoint.resolve("d/f"));
        Thread.sleep(20);
        assertThat(Files.readString(mountPoint.resolve("d/f"))).isEqualTo("data");
        FileTime read = accessTime(mountPoint.resolve("d/f"));
        assertThat(read).as("strictatime, writable: a read updates the access time").isGreaterThan(written);

        run(List.of(helper.toString(), image.toString(), mountPoint.toString(), "-o", "remount,ro"));
        Thread.sleep(1100); // the mount reads the mount table at most once a second
        assertThat(Files.readString(mountPoint.resolve("d/f"))).isEqualTo("data");
        assertThat(accessTime(mountPoint.resolve("d/f"))).as("read after remount,ro").isEqualTo(read);
        unmount(mountPoint);
        awaitFsckClean(image);
    }

    private static FileTime accessTime(Path path) throws IOException {
        return Files.readAttributes(path, BasicFileAttributes.class).lastAccessTime();
    }

    @Test
    @Timeout(300)
    void theHelperMountsAClusterNode() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        try (ClusterProcesses cluster = new ClusterProcesses(dir)) {
            cluster.startZooKeeper();
            Path image = dir.resolve("cluster.img");
            images.add(image);
            Cli mkfs = Cli.run("mkfs", "--adapter=gfs2-like", "-o", "journals=2", "--size=32m", image.toString());
            assertThat(mkfs.status()).as(mkfs.err()).isZero();
            Path mountPoint = mountPoint("a");

            mount(installHelper(), image, mountPoint, "adapter=gfs2-like,cluster=" + cluster.cluster() + ",node_id=a,log="
                    + dir.resolve("log"));

            assertThat(ProcessMounts.line(mountPoint)).contains(" - fuse.iomap " + image + " ");
            Files.writeString(mountPoint.resolve("f"), "node a");
            unmount(mountPoint);
            awaitFsckClean(image);
        }
    }

    /**
     * {@code -o blkdev} as mount(8) runs the helper, without PATH: fuseblk over a loop device the mount
     * attaches (losetup), the loop device as the source; {@code umount} returns only once the image is
     * clean and let go of, and the loop device goes with the mount.
     */
    @Test
    @Timeout(300)
    void aBlkdevMountThroughTheHelperIsCleanWhenUmountReturns() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        assumeTrue("root".equals(System.getProperty("user.name")) && Files.isExecutable(Path.of("/usr/sbin/losetup")),
                "a loop device needs root and losetup");
        Path image = image("xfs-like");
        Path mountPoint = mountPoint("mnt");
        Path helper = installHelper();

        run(List.of(helper.toString(), image.toString(), mountPoint.toString(), "-o",
                "adapter=xfs-like,blkdev,log=" + dir.resolve("log")), MOUNT_ENVIRONMENT);

        String line = ProcessMounts.line(mountPoint);
        assertThat(line).as("mounted as fuseblk over a loop device").contains(" - fuseblk.iomap /dev/loop");
        String loop = line.substring(line.indexOf(" - fuseblk.iomap ") + " - fuseblk.iomap ".length()).split(" ")[0];
        Files.writeString(mountPoint.resolve("f"), "over " + loop);
        unmount(mountPoint);
        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as("fsck right after umount: " + fsck.out() + fsck.err()).isZero();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (Files.exists(Path.of("/sys/block", Path.of(loop).getFileName().toString(), "loop"))
                && System.nanoTime() < end) {
            Thread.sleep(50);
        }
        assertThat(Path.of("/sys/block", Path.of(loop).getFileName().toString(), "loop")).as(loop + " detached")
                .doesNotExist();
    }

    /**
     * A device write-protected with {@code blockdev --setro} (xfstests generic/050): a clean image is mounted
     * read-only with mount(8)'s warning; one left unclean by a shutdown is refused, as XFS and ext4 refuse
     * it, unless {@code -o norecovery} (a read-only mount replays in memory); {@code -o ro} of the same image
     * on the writable device mounts.
     */
    @ParameterizedTest
    @Timeout(300)
    @ValueSource(strings = {"xfs-like", "gfs2-like", "bcachefs-like"})
    void aWriteProtectedDeviceIsMountedReadOnlyUnlessItsJournalNeedsReplaying(String adapter) throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        assumeTrue("root".equals(System.getProperty("user.name")) && Files.isExecutable(Path.of("/usr/sbin/losetup")),
                "a loop device needs root and losetup");
        Path image = image(adapter);
        Path mountPoint = mountPoint("mnt");
        Path helper = installHelper();
        String loop = output(List.of("losetup", "--find", "--show", image.toString())).strip();
        try {
            run(List.of("blockdev", "--setro", loop));
            String said = output(List.of(helper.toString(), loop, mountPoint.toString(), "-o", "rw"));
            assertThat(said).contains("iomap mount: " + loop + ": WARNING: device write-protected, mounting read-only.");
            assertThat(ProcessMounts.line(mountPoint)).as("mounted read-only").contains(" ro,");
            assertThatThrownBy(() -> Files.writeString(mountPoint.resolve("f"), "x")).isInstanceOf(IOException.class)
                    .hasMessageContaining("Read-only file system");
            unmount(mountPoint);
            run(List.of("blockdev", "--setrw", loop));

            mount(helper, Path.of(loop), mountPoint, "rw");
            Files.writeString(mountPoint.resolve("f"), "kept by the log force");
            // XFS_IOC_GOINGDOWN with XFS_FSOP_GOING_FLAGS_LOGFLUSH, as xfstests' godown -f
            run(List.of("python3", "-c", "import fcntl, os, struct, sys; fd = os.open(sys.argv[1], os.O_RDONLY);"
                    + " fcntl.ioctl(fd, 0x8004587d, struct.pack('I', 1))", mountPoint.toString()));
            unmount(mountPoint);
            run(List.of("blockdev", "--setro", loop));
            Result refused = status(List.of(helper.toString(), loop, mountPoint.toString(), "-o", "rw"));
            assertThat(refused.status()).as(refused.output()).isNotZero();
            assertThat(refused.output()).contains("mount: " + loop + ": cannot mount " + loop + " read-only:")
                    .doesNotContain("WARNING");
            assertThat(ProcessMounts.line(mountPoint)).as("not mounted").isNull();

            said = output(List.of(helper.toString(), loop, mountPoint.toString(), "-o", "norecovery"));
            assertThat(said).contains("WARNING: device write-protected, mounting read-only.");
            assertThat(Files.readString(mountPoint.resolve("f"))).isEqualTo("kept by the log force");
            unmount(mountPoint);
            run(List.of("blockdev", "--setrw", loop));
            mount(helper, Path.of(loop), mountPoint, "ro");
            assertThat(Files.readString(mountPoint.resolve("f"))).isEqualTo("kept by the log force");
            unmount(mountPoint);
        } finally {
            new ProcessBuilder("blockdev", "--setrw", loop).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
            if (ProcessMounts.line(mountPoint) != null) {
                new ProcessBuilder("umount", "-l", mountPoint.toString()).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
            }
            new ProcessBuilder("losetup", "-d", loop).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** A command's exit status and its output (standard output and error together). */
    private record Result(int status, String output) {
    }

    /** @return what a command that must succeed printed */
    private String output(List<String> command) throws Exception {
        Result result = status(command);
        assertThat(result.status()).as(command + ": " + result.output()).isZero();
        return result.output();
    }

    /** Runs a command to its end (bounded), as mount(8) runs the helper. */
    private Result status(List<String> command) throws Exception {
        Path out = dir.resolve("status.out");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
        builder.environment().put("IOMAP_CLI_CLASSPATH", System.getProperty("java.class.path"));
        builder.environment().put("IOMAP_JAVA_HOME", Path.of(System.getProperty("java.home")).toString());
        Process process = builder.start();
        if (!process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError(command + " did not return: " + Files.readString(out));
        }
        return new Result(process.exitValue(), Files.readString(out));
    }

    private Path image(String adapter) throws IOException {
        Path image = dir.resolve(adapter + ".img");
        images.add(image);
        Cli mkfs = Cli.run("mkfs", "--adapter=" + adapter, "--size=32m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        return image;
    }

    private Path mountPoint(String name) throws IOException {
        Path mountPoint = Files.createDirectory(dir.resolve(name)).toRealPath();
        mountPoints.add(mountPoint);
        return mountPoint;
    }

    /** {@code bin/iomap install-mount-helper DIR}: the helper, calling this checkout's bin/iomap. */
    private Path installHelper() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("sbin"));
        run(List.of(ProcessMounts.checkout().resolve("bin/iomap").toString(), "install-mount-helper", bin.toString()));
        return bin.resolve("mount.fuse.iomap");
    }

    /** The helper as mount(8) calls it; it must have returned 0 with the image mounted. */
    private void mount(Path helper, Path image, Path mountPoint, String options) throws Exception {
        run(List.of(helper.toString(), image.toString(), mountPoint.toString(), "-o", options));
        assertThat(ProcessMounts.line(mountPoint)).as("mounted once the helper returned").isNotNull();
    }

    /** {@code umount} as root (what xfstests does), {@code fusermount3 -u} otherwise. */
    private void unmount(Path mountPoint) throws Exception {
        boolean root = "root".equals(System.getProperty("user.name"));
        run(root ? List.of("umount", mountPoint.toString()) : List.of("fusermount3", "-u", mountPoint.toString()));
        assertThat(ProcessMounts.line(mountPoint)).as("unmounted").isNull();
    }

    /** fsck finds the image clean once the unmounted mount's process has let go of it. */
    private static void awaitFsckClean(Path image) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        Cli fsck = Cli.run("fsck", image.toString());
        while (fsck.status() != 0 && System.nanoTime() < end) {
            Thread.sleep(200);
            fsck = Cli.run("fsck", image.toString());
        }
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        assertThat(holders(image)).as("processes still holding the image").isEmpty();
    }

    private void run(List<String> command) throws Exception {
        run(command, false);
    }

    /**
     * Runs a command to its end, which must be status 0.
     *
     * @param mountEnvironment whether without PATH, as mount(8) runs its helpers
     */
    private void run(List<String> command, boolean mountEnvironment) throws Exception {
        Path out = dir.resolve("command.out");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
        Map<String, String> env = builder.environment();
        if (mountEnvironment) {
            env.remove("PATH");
        }
        env.put("IOMAP_CLI_CLASSPATH", System.getProperty("java.class.path"));
        env.put("IOMAP_JAVA_HOME", Path.of(System.getProperty("java.home")).toString());
        Process process = builder.start();
        if (!process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError(command + " did not return: " + Files.readString(out));
        }
        assertThat(process.exitValue()).as(command + ": " + Files.readString(out)).isZero();
    }



    /** @return the processes whose command line names {@code image} (a detached mount of it) */
    private static List<ProcessHandle> holders(Path image) {
        String name = image.toString();
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != ProcessHandle.current().pid())
                .filter(p -> p.info().arguments().map(args -> List.of(args).contains(name)).orElse(false))
                .toList();
    }
}
