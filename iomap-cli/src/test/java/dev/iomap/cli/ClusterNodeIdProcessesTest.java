package dev.iomap.cli;

import dev.iomap.devices.LoopbackPorts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35 item 10, through the command line: a second {@code iomap mount --cluster} with the
 * {@code --node-id} of a live node either mounted too (both holding the root glock as {@code xid.1})
 * or failed with a cryptic {@code NodeExists} after deleting the live node's demote directory, so that
 * a third node hung in its mount for minutes. Now it is refused in one line and changes nothing: the
 * live node goes on, and a node with another id mounts at once. Processes: {@code iomap zookeeper},
 * the nodes' {@code iomap mount}s (FUSE); each is stopped after the test, also when it fails.
 */
@Timeout(180)
class ClusterNodeIdProcessesTest {
    /** How long a node may take to mount, refuse or return after its unmount (JVM start on a loaded machine). */
    private static final long WAIT_SECONDS = 60;

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
    void aSecondMountWithALiveNodesIdIsRefusedInOneLineAndTheClusterGoesOn() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "FUSE end-to-end test skipped: /dev/fuse is absent");
        assumeTrue(onPath("fusermount3"), "FUSE end-to-end test skipped: fusermount3 is not installed");
        int port = LoopbackPorts.reserve();
        Process zookeeper = start(dir.resolve("zookeeper.err"), "zookeeper", "--port", Integer.toString(port),
                "--data", dir.resolve("zk").toString());
        var zkOut = new BufferedReader(new InputStreamReader(zookeeper.getInputStream(), StandardCharsets.UTF_8));
        assertThat(zkOut.readLine()).startsWith("zookeeper serving on 127.0.0.1:" + port);
        Path image = dir.resolve("shared.img");
        Cli mkfs = Cli.run("mkfs", "--adapter=gfs2-like", "-o", "journals=3", "--size=32m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        String cluster = "zk=127.0.0.1:" + port;
        Path one = mountNode(image, cluster, "node-1", "one");
        Files.writeString(one.resolve("before"), "written before the duplicate");

        Path duplicate = Files.createDirectory(dir.resolve("duplicate"));
        mountPoints.add(duplicate);
        Path err = dir.resolve("duplicate.err");
        Process refused = start(err, "mount", "--adapter", "gfs2-like", "--cluster", cluster, "--node-id", "node-1",
                image.toString(), duplicate.toString());

        assertThat(refused.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("the duplicate's mount returned (mounted: %s)",
                mounted(duplicate)).isTrue();
        assertThat(refused.exitValue()).isEqualTo(1);
        assertThat(Files.readString(err)).matches("iomap: joining " + cluster + " as node node-1\n"
                + "iomap: node id node-1 is in use by a live mount of this filesystem \\(incarnation node-1\\.1,"
                + " since \\S+\\): give this mount another node id; if that mount died, its ZooKeeper session"
                + " ends within its session timeout, and the id is free again\n");
        Files.writeString(one.resolve("after"), "written after the duplicate was refused");
        Path two = mountNode(image, cluster, "node-2", "two");
        assertThat(Files.readString(two.resolve("before"))).isEqualTo("written before the duplicate");
        assertThat(Files.readString(two.resolve("after"))).isEqualTo("written after the duplicate was refused");
        Files.writeString(two.resolve("from-two"), "node 2");
        assertThat(Files.readString(one.resolve("from-two"))).isEqualTo("node 2");

        unmount(one, processes.get(1));
        unmount(two, processes.get(3));
        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
    }

    /** Starts {@code iomap mount --cluster} on a new directory and waits until the kernel shows it mounted. */
    private Path mountNode(Path image, String cluster, String nodeId, String directory) throws Exception {
        Path mountPoint = Files.createDirectory(dir.resolve(directory));
        mountPoints.add(mountPoint);
        Path err = dir.resolve(directory + ".err");
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
