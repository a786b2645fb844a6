package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mount server ({@code bin/iomap serve DIR}) and its client ({@code bin/iomap} with
 * {@code IOMAP_SERVER=DIR}), as processes: a served {@code mount} returns once mounted and stays in the
 * server, {@code umount} then a mount again (through the mount helper, as xfstests does) keeps what was
 * written, relative paths are the client's, the server refuses what it does not run, a client finds out
 * when no server runs, and stopping the server (SIGTERM) unmounts what it serves and leaves the images
 * clean. The server is stopped after each test (forcibly if SIGTERM does not end it), and every mount is
 * lazily unmounted.
 */
class MountServerTest {
    private static final long WAIT_SECONDS = 60;
    private static final int REMOUNTS = Integer.getInteger("mount.remounts", 3);

    @TempDir
    Path dir;

    private Process server;
    private final List<Path> mountPoints = new ArrayList<>();

    @AfterEach
    void stopEverything() throws Exception {
        for (Path mountPoint : mountPoints) {
            if (ProcessMounts.line(mountPoint) != null) {
                new ProcessBuilder("fusermount3", "-u", "-z", mountPoint.toString()).inheritIO().start()
                        .waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (server != null && server.isAlive()) {
            server.destroy();
            if (!server.waitFor(30, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @Timeout(300)
    void aServedMountReturnsOnceMountedAndUmountThenMountAgainKeepsWhatWasWritten() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        Path serverDir = startServer();
        Path image = dir.resolve("x.img");
        Path mountPoint = mountPoint("mnt");
        Path helper = installHelper();

        assertThat(client(serverDir, dir, "mkfs", "--adapter=xfs-like", "--size=32m", image.toString()).status()).isZero();
        for (int round = 0; round < REMOUNTS; round++) {
            Result mount = command(serverDir, dir, List.of(helper.toString(), image.toString(), mountPoint.toString(),
                    "-o", "rw,adapter=xfs-like"));
            assertThat(mount.status()).as(mount.output()).isZero();
            assertThat(ProcessMounts.line(mountPoint)).as("mounted once the helper returned").contains(" - fuse.iomap " + image + " ");
            if (round > 0) {
                assertThat(Files.readString(mountPoint.resolve("round"))).as("round %d", round)
                        .isEqualTo(Integer.toString(round - 1));
            }
            Files.writeString(mountPoint.resolve("round"), Integer.toString(round));
            unmount(mountPoint);
        }

        Result fsck = awaitFsckClean(serverDir, image);
        assertThat(fsck.output()).contains("clean");
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (mountsServed() < REMOUNTS && System.nanoTime() < end) {
            Thread.sleep(50);
        }
        assertThat(mountsServed()).as("mounts the server ran: " + serverLog()).isEqualTo(REMOUNTS);
    }

    @Test
    @Timeout(300)
    void stoppingTheServerUnmountsWhatItServesAndLeavesTheImagesClean() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        Path serverDir = startServer();
        List<Path> images = List.of(dir.resolve("a.img"), dir.resolve("b.img"));
        List<Path> points = List.of(mountPoint("a"), mountPoint("b"));
        for (int i = 0; i < 2; i++) {
            String adapter = i == 0 ? "xfs-like" : "gfs2-like";
            assertThat(client(serverDir, dir, "mkfs", "--adapter=" + adapter, "--size=32m", images.get(i).toString())
                    .status()).isZero();
            Result mount = client(serverDir, dir, "mount", images.get(i).toString(), points.get(i).toString());
            assertThat(mount.status()).as(mount.output()).isZero();
            Files.writeString(points.get(i).resolve("f"), "written before the server stopped " + i);
        }

        server.destroy();   // SIGTERM
        assertThat(server.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("the server ended").isTrue();

        for (int i = 0; i < 2; i++) {
            assertThat(ProcessMounts.line(points.get(i))).as("unmounted with the server").isNull();
            Cli fsck = Cli.run("fsck", images.get(i).toString());
            assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        }
        Path again = startServer();
        for (int i = 0; i < 2; i++) {
            assertThat(client(again, dir, "mount", images.get(i).toString(), points.get(i).toString()).status()).isZero();
            assertThat(Files.readString(points.get(i).resolve("f"))).isEqualTo("written before the server stopped " + i);
            unmount(points.get(i));
        }
    }

    /**
     * A mount of an image that is mounted (the mount table lists it) is refused at once, not after the busy
     * timeout: only an image unmounted a moment ago, still writing back, is waited for (xfstests
     * generic/409-411 mount the mounted scratch device again, dozens of times).
     */
    @Test
    @Timeout(300)
    void aMountOfAMountedImageIsRefusedAtOnceNamingWhereItIsMounted() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        Path serverDir = startServer();
        Path image = dir.resolve("x.img");
        Path first = mountPoint("first");
        Path second = mountPoint("second");
        assertThat(client(serverDir, dir, "mkfs", "--size=32m", image.toString()).status()).isZero();
        assertThat(client(serverDir, dir, "mount", image.toString(), first.toString()).status()).isZero();

        Result again = client(serverDir, dir, "mount", image.toString(), second.toString());

        assertThat(again.status()).isEqualTo(1);
        assertThat(again.output()).contains(image + " is mounted on " + first + ": unmount it first")
                .doesNotContain("waiting");
        assertThat(ProcessMounts.line(second)).isNull();
        unmount(first);
        assertThat(client(serverDir, dir, "mount", image.toString(), second.toString()).status())
                .as("mounted once the first mount is gone").isZero();
        unmount(second);
    }

    /** {@code -o ro,norecovery} mounts (xfstests generic/537); {@code norecovery} without {@code ro} is refused. */
    @Test
    @Timeout(300)
    void norecoveryMountsWithRoAndIsRefusedWithout() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "no /dev/fuse or fusermount3");
        Path serverDir = startServer();
        Path image = dir.resolve("x.img");
        Path mnt = mountPoint("mnt");
        assertThat(client(serverDir, dir, "mkfs", "--size=32m", image.toString()).status()).isZero();

        Result refused = client(serverDir, dir, "mount", image.toString(), mnt.toString(), "-o", "norecovery");
        assertThat(refused.status()).isNotZero();
        assertThat(refused.output()).contains("-o norecovery needs ro");
        assertThat(ProcessMounts.line(mnt)).isNull();

        Result mounted = client(serverDir, dir, "mount", image.toString(), mnt.toString(), "-o", "ro,norecovery");
        assertThat(mounted.status()).as(mounted.output()).isZero();
        assertThat(ProcessMounts.line(mnt).split(" ")[5]).as("the mount's own options").startsWith("ro");
        unmount(mnt);
    }

    @Test
    @Timeout(120)
    void relativePathsAreTheClientsAndAFailedCommandSaysWhyWithItsStatus() throws Exception {
        Path serverDir = startServer();
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));

        Result mkfs = client(serverDir, elsewhere, "mkfs", "--size=16m", "rel.img");

        assertThat(mkfs.status()).as(mkfs.output()).isZero();
        assertThat(elsewhere.resolve("rel.img")).as("made in the client's working directory").exists();
        Result missing = client(serverDir, elsewhere, "fsck", "no-such.img");
        assertThat(missing.status()).isEqualTo(1);
        assertThat(missing.output()).contains("iomap: no such file: " + elsewhere.resolve("no-such.img"));
    }

    @Test
    @Timeout(120)
    void aCommandTheServerDoesNotRunIsRefusedAndNoServerIsSaidSo() throws Exception {
        Path serverDir = startServer();
        Path request = Files.createDirectory(serverDir.resolve(MountServer.NEW).resolve("by-hand"));
        Files.writeString(request.resolve(MountServer.ARGS), "bench\0--help\0", StandardCharsets.UTF_8);
        Files.writeString(request.resolve(MountServer.CWD), dir.toString(), StandardCharsets.UTF_8);
        Path queued = Files.move(request, serverDir.resolve(MountServer.QUEUE).resolve("by-hand"));

        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!Files.exists(queued.resolve(MountServer.STATUS)) && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        assertThat(Files.readString(queued.resolve(MountServer.STATUS)).strip()).isEqualTo("2");
        assertThat(Files.readString(queued.resolve(MountServer.ERR))).contains("run bench without IOMAP_SERVER");

        Result noServer = client(dir.resolve("no-server"), dir, "adapters");
        assertThat(noServer.status()).isEqualTo(1);
        assertThat(noServer.output()).contains("no mount server runs in " + dir.resolve("no-server"));
    }

    /** Starts {@code bin/iomap serve DIR} and waits until it serves. */
    private Path startServer() throws Exception {
        if (server != null && server.isAlive()) {
            throw new IllegalStateException("one server at a time");
        }
        Path serverDir = dir.resolve("server");
        ProcessBuilder builder = new ProcessBuilder(ProcessMounts.checkout().resolve("bin/iomap").toString(), "serve", serverDir.toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile()));
        environment(builder.environment());
        server = builder.start();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (MountServer.runningPid(serverDir) != server.pid()) {
            assertThat(server.isAlive()).as("the server started: " + serverLog()).isTrue();
            assertThat(System.nanoTime() < end).as("the server started in time").isTrue();
            Thread.sleep(50);
        }
        return serverDir;
    }

    private String serverLog() throws IOException {
        Path log = dir.resolve("server.log");
        return Files.exists(log) ? Files.readString(log) : "";
    }

    /** {@code bin/iomap ARGS} with {@code IOMAP_SERVER} set, from {@code cwd}. */
    private Result client(Path serverDir, Path cwd, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(ProcessMounts.checkout().resolve("bin/iomap").toString());
        command.addAll(List.of(args));
        return command(serverDir, cwd, command);
    }

    private Result command(Path serverDir, Path cwd, List<String> command) throws Exception {
        Path out = Files.createTempFile(dir, "command", ".out");
        ProcessBuilder builder = new ProcessBuilder(command).directory(cwd.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile());
        environment(builder.environment());
        builder.environment().put("IOMAP_SERVER", serverDir.toString());
        Process process = builder.start();
        if (!process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError(command + " did not return: " + Files.readString(out));
        }
        return new Result(process.exitValue(), Files.readString(out));
    }

    private static void environment(Map<String, String> env) {
        env.put("IOMAP_CLI_CLASSPATH", System.getProperty("java.class.path"));
        env.put("IOMAP_JAVA_HOME", Path.of(System.getProperty("java.home")).toString());
        env.remove("IOMAP_SERVER");
    }

    private Result awaitFsckClean(Path serverDir, Path image) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        Result fsck = client(serverDir, dir, "fsck", image.toString());
        while (fsck.status() != 0 && System.nanoTime() < end) {
            Thread.sleep(200);
            fsck = client(serverDir, dir, "fsck", image.toString());
        }
        assertThat(fsck.status()).as(fsck.output()).isZero();
        return fsck;
    }

    private Path mountPoint(String name) throws IOException {
        Path mountPoint = Files.createDirectory(dir.resolve(name)).toRealPath();
        mountPoints.add(mountPoint);
        return mountPoint;
    }

    private Path installHelper() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("sbin"));
        Process process = new ProcessBuilder(ProcessMounts.checkout().resolve("bin/iomap").toString(), "install-mount-helper",
                bin.toString()).redirectErrorStream(true).start();
        assertThat(process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isZero();
        return bin.resolve("mount.fuse.iomap");
    }

    private void unmount(Path mountPoint) throws Exception {
        boolean root = "root".equals(System.getProperty("user.name"));
        Process process = new ProcessBuilder(root ? List.of("umount", mountPoint.toString())
                : List.of("fusermount3", "-u", mountPoint.toString())).inheritIO().start();
        assertThat(process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isZero();
        assertThat(ProcessMounts.line(mountPoint)).as("unmounted").isNull();
    }



    /** @return how many mounts the server's log says it ran to their unmount */
    private long mountsServed() throws IOException {
        return serverLog().lines().filter(line -> line.startsWith("iomap serve: #") && line.contains(" mounted after ")).count();
    }

    /** A command's exit status and its output (standard output and error together). */
    private record Result(int status, String output) {
    }
}
