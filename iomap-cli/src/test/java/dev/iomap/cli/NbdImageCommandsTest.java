package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.devices.nbd.LocalNbdServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image commands on an NBD export ({@code nbd://127.0.0.1:PORT/EXPORT}) of a real nbd-server that
 * the test starts on a free port and stops after it, also when it fails: mkfs, fsck, stat, bench
 * {@code --device}, and two cluster nodes mounting one export with FUSE (in their own processes, with
 * {@code iomap zookeeper --ensemble}, three servers, in a third, and the ensemble's connect string). Every
 * mount and process is stopped after the test.
 */
@Timeout(240)
class NbdImageCommandsTest {
    private static final long EXPORT_BYTES = 128L << 20;
    /** How long a node may take to mount or to return after its unmount (JVM start on a loaded machine). */
    private static final long WAIT_SECONDS = 60;
    private static final String TINY_JOB = String.join("\n", "[global]", "ioengine=psync", "rw=randwrite", "bs=4k",
            "size=256k", "fdatasync=1", "[tiny]", "");

    @TempDir
    Path dir;

    private LocalNbdServer server;
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> mountPoints = new ArrayList<>();

    @AfterEach
    void stopEverything() throws Exception {
        try {
            for (Path mountPoint : mountPoints) {
                if (mounted(mountPoint)) {
                    new ProcessBuilder("fusermount3", "-u", "-z", mountPoint.toString()).inheritIO().start()
                            .waitFor(10, TimeUnit.SECONDS);
                }
            }
            for (int i = processes.size() - 1; i >= 0; i--) {
                Process process = processes.get(i);
                process.destroy();
                if (!process.waitFor(15, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    @Test
    void mkfsFsckStatAndBenchTakeAnNbdExportForAnImage() throws Exception {
        String fs = address(startServer("fs", "bench"), "fs");

        Cli mkfs = Cli.run("mkfs", "--adapter=xfs-like", fs);
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        assertThat(mkfs.out()).startsWith(fs + ": xfs-like filesystem, " + EXPORT_BYTES + " bytes, block size 4096");
        Cli again = Cli.run("mkfs", "--adapter=xfs-like", fs);
        assertThat(again.status()).isNotZero();
        assertThat(again.err()).contains(fs + " already holds a xfs-like filesystem: give --force");

        Cli fsck = Cli.run("fsck", fs);
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        assertThat(fsck.out()).startsWith(fs + ": clean (xfs-like, 4096-byte blocks");
        Cli stat = Cli.run("stat", fs);
        assertThat(stat.status()).as(stat.err()).isZero();
        assertThat(stat.out()).contains("image        : " + fs + " (" + EXPORT_BYTES + " bytes)")
                .contains("adapter      : xfs-like");

        String bench = address(server, "bench");
        Path job = Files.writeString(dir.resolve("tiny.fio"), TINY_JOB);
        Cli run = Cli.run("bench", "--adapter=xfs-like", "--progress=never", "--device=" + bench, job.toString());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains(bench);
        assertThat(Cli.run("fsck", bench).status()).isZero();
        Cli benchAgain = Cli.run("bench", "--adapter=xfs-like", "--progress=never", "--device=" + bench,
                job.toString());
        assertThat(benchAgain.err()).contains(bench + " already holds a xfs-like filesystem: give --force");
    }

    @Test
    void addressesThisClientCannotUseAreRefusedInOneLine() throws IOException {
        Cli tls = Cli.run("fsck", "nbds://127.0.0.1/disk");
        assertThat(tls.status()).isNotZero();
        assertThat(tls.err()).contains("NBD over TLS is not supported by this client");
        Cli badOption = Cli.run("stat", "nbd://127.0.0.1/disk?speed=fast");
        assertThat(badOption.err()).contains("no option 'speed'");
        Path job = Files.writeString(dir.resolve("tiny.fio"), TINY_JOB);
        Cli device = Cli.run("bench", "--device=nbds://127.0.0.1/x", job.toString());
        assertThat(device.err()).contains("bad --device 'nbds://127.0.0.1/x': nbds://127.0.0.1/x: NBD over TLS");
    }

    /**
     * Two gfs2-like cluster nodes, each {@code iomap mount --cluster zk=H:P,H:P,H:P} (the connect string of
     * an {@code iomap zookeeper --ensemble}) of one NBD export in its own process: what one writes and fsyncs
     * through its mount point, the other reads; the export checks clean after both unmounted.
     */
    @Test
    void twoClusterNodesMountOneNbdExportWithFuse() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "FUSE end-to-end test skipped: /dev/fuse is absent");
        assumeTrue(onPath("fusermount3"), "FUSE end-to-end test skipped: fusermount3 is not installed");
        String shared = address(startServer("shared"), "shared");
        Cli mkfs = Cli.run("mkfs", "--adapter=gfs2-like", "-o", "journals=2", shared);
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        int port = freeEnsemblePort();
        Process zookeeper = start(dir.resolve("zookeeper.err"), "zookeeper", "--ensemble", "--port",
                Integer.toString(port), "--data", dir.resolve("zk").toString());
        var zkOut = new BufferedReader(new InputStreamReader(zookeeper.getInputStream(), StandardCharsets.UTF_8));
        String connect = "127.0.0.1:" + port + ",127.0.0.1:" + (port + 1) + ",127.0.0.1:" + (port + 2);
        assertThat(zkOut.readLine()).startsWith("zookeeper ensemble serving on " + connect);
        String cluster = "zk=" + connect;

        Path one = mountNode(shared, cluster, "node-1");
        Path two = mountNode(shared, cluster, "node-2");
        byte[] first = pattern(1, 3 * 4096 + 77);
        writeAndFsync(one.resolve("from-1"), first);
        assertThat(Files.readAllBytes(two.resolve("from-1"))).as("node 2 reads node 1's bytes").isEqualTo(first);
        byte[] second = pattern(2, 9000);
        writeAndFsync(two.resolve("from-2"), second);
        assertThat(Files.readAllBytes(one.resolve("from-2"))).as("node 1 reads node 2's file").isEqualTo(second);

        unmount(one, processes.get(1));
        unmount(two, processes.get(2));
        Cli fsck = Cli.run("fsck", shared);
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        assertThat(fsck.out()).startsWith(shared + ": clean (gfs2-like");
    }

    private LocalNbdServer startServer(String... exports) throws IOException {
        assumeTrue(LocalNbdServer.Kind.NBD_SERVER.installed(), "nbd-server is not installed");
        server = LocalNbdServer.start(LocalNbdServer.Kind.NBD_SERVER, dir, EXPORT_BYTES, exports);
        return server;
    }

    private static String address(LocalNbdServer on, String export) {
        return "nbd://127.0.0.1:" + on.port() + "/" + export;
    }

    /** Starts {@code iomap mount --cluster} on a new directory and waits until the kernel shows it mounted. */
    private Path mountNode(String image, String cluster, String nodeId) throws Exception {
        Path mountPoint = Files.createDirectory(dir.resolve(nodeId));
        mountPoints.add(mountPoint);
        Path err = dir.resolve(nodeId + ".err");
        Process node = start(err, "mount", "--adapter", "gfs2-like", "--cluster", cluster, "--node-id", nodeId,
                image, mountPoint.toString());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!mounted(mountPoint)) {
            if (!node.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError(nodeId + " did not mount (alive: " + node.isAlive() + "): "
                        + Files.readString(err));
            }
            Thread.sleep(50);
        }
        return mountPoint;
    }

    /** {@code fusermount3 -u}, then the node's process ends with status 0. */
    private static void unmount(Path mountPoint, Process node) throws Exception {
        Process fusermount = new ProcessBuilder("fusermount3", "-u", mountPoint.toString()).inheritIO().start();
        assertThat(fusermount.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(fusermount.exitValue()).as("fusermount3 -u " + mountPoint).isZero();
        assertThat(node.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("the node's iomap mount returned").isTrue();
        assertThat(node.exitValue()).isZero();
    }

    /** Runs {@code iomap ARGS} in a new JVM on the test class path, stderr to {@code err}. */
    private Process start(Path err, String... args) throws IOException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-cp", System.getProperty("java.class.path"),
                IomapCli.class.getName()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectError(err.toFile()).start();
        processes.add(process);
        return process;
    }

    private static void writeAndFsync(Path file, byte[] bytes) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ByteBuffer src = ByteBuffer.wrap(bytes);
            while (src.hasRemaining()) {
                channel.write(src, src.position());
            }
            channel.force(true);
        }
    }

    private static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 13 + seed * 101 + 5);
        }
        return bytes;
    }

    /** @return whether the kernel lists a mount on {@code mountPoint} (in /proc/self/mountinfo) */
    private static boolean mounted(Path mountPoint) throws IOException {
        String target = " " + mountPoint.toRealPath() + " ";
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().anyMatch(line -> line.contains(target));
    }

    private static boolean onPath(String tool) {
        String path = System.getenv("PATH");
        return path != null && Arrays.stream(path.split(":")).anyMatch(d -> Files.isExecutable(Path.of(d, tool)));
    }

    /** @return P such that P..P+2, P+707..P+709 and P+1707..P+1709 were free a moment ago */
    private static int freeEnsemblePort() throws IOException {
        var random = new java.util.Random();
        for (int attempt = 0; attempt < 100; attempt++) {
            int first = 20000 + random.nextInt(40000);
            List<ServerSocket> sockets = new ArrayList<>();
            try {
                for (int offset : new int[] {0, 1, 2, 707, 708, 709, 1707, 1708, 1709}) {
                    sockets.add(new ServerSocket(first + offset, 1, java.net.InetAddress.getLoopbackAddress()));
                }
                return first;
            } catch (IOException taken) {
                // one of them is in use: try another range
            } finally {
                for (ServerSocket socket : sockets) {
                    socket.close();
                }
            }
        }
        throw new IOException("found no free range of ports for a ZooKeeper ensemble");
    }
}
