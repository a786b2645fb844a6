package dev.iomap.cli;

import dev.iomap.devices.LoopbackPorts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two cluster nodes in two processes through the command line, end to end: {@code iomap zookeeper} in a
 * third process, then {@code iomap mount --adapter gfs2-like --cluster zk=127.0.0.1:PORT} twice (FUSE
 * mounts of one image on two directories); what one node writes and fsyncs through its mount point, the
 * other reads through its own, both ways; fsck is refused while the nodes have the image, and finds it
 * clean after both unmounted with {@code fusermount3 -u}. Every process is stopped after the test, also
 * when it fails (mounts lazily unmounted first).
 */
@Timeout(120)
class ClusterMountProcessesTest {
    /** How long a node may take to mount or to return after its unmount (JVM start on a loaded machine). */
    private static final long WAIT_SECONDS = 40;

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();
    private final List<Path> mountPoints = new ArrayList<>();

    @AfterEach
    void stopEverything() throws Exception {
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
    }

    @Test
    void aWriteAndFsyncOnOneNodeIsReadOnTheOtherBothWaysAndTheImageIsCleanAfter() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "FUSE end-to-end test skipped: /dev/fuse is absent");
        assumeTrue(onPath("fusermount3"), "FUSE end-to-end test skipped: fusermount3 is not installed");
        int port = LoopbackPorts.reserve();
        Process zookeeper = start(dir.resolve("zookeeper.err"), "zookeeper", "--port", Integer.toString(port),
                "--data", dir.resolve("zk").toString());
        var zkOut = new BufferedReader(new InputStreamReader(zookeeper.getInputStream(), StandardCharsets.UTF_8));
        assertThat(zkOut.readLine()).isEqualTo("zookeeper serving on 127.0.0.1:" + port + " (data in "
                + dir.resolve("zk") + ")");

        Path image = dir.resolve("shared.img");
        Cli mkfs = Cli.run("mkfs", "--adapter=gfs2-like", "-o", "journals=2", "--size=32m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        String cluster = "zk=127.0.0.1:" + port;
        Path one = mountNode(image, cluster, "node-1");
        Path two = mountNode(image, cluster, "node-2");

        byte[] first = pattern(1, 3 * 4096 + 77);
        writeAndFsync(one.resolve("from-1"), first);
        assertThat(Files.readAllBytes(two.resolve("from-1"))).as("node 2 reads node 1's bytes").isEqualTo(first);

        byte[] second = pattern(2, first.length);
        writeAndFsync(two.resolve("from-1"), second);
        byte[] third = pattern(3, 5000);
        writeAndFsync(two.resolve("from-2"), third);
        assertThat(Files.readAllBytes(one.resolve("from-1"))).as("node 1 reads node 2's overwrite").isEqualTo(second);
        assertThat(Files.readAllBytes(one.resolve("from-2"))).as("node 1 reads node 2's new file").isEqualTo(third);

        Cli fsckWhileMounted = Cli.run("fsck", image.toString());
        assertThat(fsckWhileMounted.status()).isEqualTo(1);
        assertThat(fsckWhileMounted.err()).startsWith("iomap: " + image + " is in use: a cluster node has it mounted");

        unmount(one, processes.get(1));
        unmount(two, processes.get(2));
        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        assertThat(fsck.out()).startsWith(image + ": clean (gfs2-like");
    }

    @Test
    void anAdapterWithoutAClusterModeAndANodeIdWithoutAClusterAreRefusedInOneLine() throws IOException {
        Path image = dir.resolve("xfs.img");
        Cli mkfs = Cli.run("mkfs", "--size=16m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        Path mountPoint = Files.createDirectory(dir.resolve("mnt"));
        byte[] before = Files.readAllBytes(image);

        Cli xfs = Cli.run("mount", "--cluster", "zk=127.0.0.1:1", "--node-id", "n1", image.toString(), mountPoint.toString());
        assertThat(xfs.status()).isEqualTo(1);
        assertThat(xfs.err()).isEqualTo("iomap: joining zk=127.0.0.1:1 as node n1\niomap: xfs-like cannot mount as a"
                + " cluster node (--cluster): only an adapter with a cluster mode can share its device with other nodes"
                + " (gfs2-like)\n");
        Cli nodeId = Cli.run("mount", "--node-id", "n1", image.toString(), mountPoint.toString());
        assertThat(nodeId.status()).isEqualTo(1);
        assertThat(nodeId.err()).isEqualTo("iomap: --node-id is for a cluster node: give --cluster too\n");
        Cli badId = Cli.run("mount", "--cluster", "zk=127.0.0.1:1", "--node-id", "a.b", image.toString(),
                mountPoint.toString());
        assertThat(badId.err()).isEqualTo("iomap: bad --node-id: node id 'a.b' must be 1 to 128 letters, digits, '-'"
                + " or '_'\n");
        assertThat(Files.readAllBytes(image)).as("the refused mounts changed nothing").isEqualTo(before);
    }

    /** Starts {@code iomap mount --cluster} on a new directory and waits until the kernel shows it mounted. */
    private Path mountNode(Path image, String cluster, String nodeId) throws Exception {
        Path mountPoint = Files.createDirectory(dir.resolve(nodeId));
        mountPoints.add(mountPoint);
        Path err = dir.resolve(nodeId + ".err");
        Process node = start(err, "mount", "--adapter", "gfs2-like", "--cluster", cluster, "--node-id", nodeId,
                image.toString(), mountPoint.toString());
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!mounted(mountPoint)) {
            if (!node.isAlive() || System.nanoTime() > end) {
                throw new AssertionError(nodeId + " did not mount (alive: " + node.isAlive() + "): "
                        + Files.readString(err));
            }
            Thread.sleep(50);
        }
        assertThat(Files.readString(err)).startsWith("iomap: joining " + cluster + " as node " + nodeId + "\n");
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
        return path != null && java.util.Arrays.stream(path.split(":")).anyMatch(d -> Files.isExecutable(Path.of(d, tool)));
    }

}
