package dev.iomap.cli;

import dev.iomap.devices.LoopbackPorts;
import static org.assertj.core.api.Assertions.assertThat;

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

/**
 * A cluster of {@code iomap} processes for one test: {@code iomap zookeeper} on 127.0.0.1 and gfs2-like
 * nodes mounted through FUSE with {@code iomap mount --cluster}, each in its own JVM on the test class
 * path. {@link #close} lazily unmounts every mount point still mounted and stops every process, also
 * when the test failed.
 */
final class ClusterProcesses implements AutoCloseable {
    /** How long a node may take to mount or to return after its unmount (JVM start on a loaded machine). */
    static final long WAIT_SECONDS = 40;

    private final Path dir;
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> mountPoints = new ArrayList<>();
    private final List<Process> nodes = new ArrayList<>();
    private String cluster;

    /** @param dir the test's temporary directory: ZooKeeper's data, mount points and error logs go there */
    ClusterProcesses(Path dir) {
        this.dir = dir;
    }

    /** @return whether this machine can run FUSE mounts (a {@code /dev/fuse} and {@code fusermount3}) */
    static boolean fuseAvailable() {
        String path = System.getenv("PATH");
        return Files.exists(Path.of("/dev/fuse")) && path != null && java.util.Arrays.stream(path.split(":"))
                .anyMatch(d -> Files.isExecutable(Path.of(d, "fusermount3")));
    }

    /** Starts {@code iomap zookeeper} on a free port and waits for its first line. */
    void startZooKeeper() throws IOException {
        int port = LoopbackPorts.reserve();
        Process zookeeper = start(dir.resolve("zookeeper.err"), "zookeeper", "--port", Integer.toString(port),
                "--data", dir.resolve("zk").toString());
        var out = new BufferedReader(new InputStreamReader(zookeeper.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("zookeeper serving on 127.0.0.1:" + port + " (data in "
                + dir.resolve("zk") + ")");
        cluster = "zk=127.0.0.1:" + port;
    }

    /** @return the {@code --cluster} value of the ZooKeeper {@link #startZooKeeper} started ({@code zk=127.0.0.1:PORT}) */
    String cluster() {
        return cluster;
    }

    /**
     * Starts {@code iomap mount --adapter gfs2-like --cluster} of {@code image} on a new directory named
     * {@code nodeId} and waits until the kernel shows it mounted.
     *
     * @return the mount point
     */
    Path mountNode(Path image, String nodeId) throws Exception {
        Path mountPoint = Files.createDirectory(dir.resolve(nodeId));
        mountPoints.add(mountPoint);
        Path err = dir.resolve(nodeId + ".err");
        Process node = start(err, "mount", "--adapter", "gfs2-like", "--cluster", cluster, "--node-id", nodeId,
                image.toString(), mountPoint.toString());
        nodes.add(node);
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

    /** {@code fusermount3 -u} of every node, in mount order; each node's process then ends with status 0. */
    void unmountAll() throws Exception {
        for (int i = 0; i < nodes.size(); i++) {
            Path mountPoint = mountPoints.get(i);
            Process fusermount = new ProcessBuilder("fusermount3", "-u", mountPoint.toString()).inheritIO().start();
            assertThat(fusermount.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(fusermount.exitValue()).as("fusermount3 -u " + mountPoint).isZero();
            assertThat(nodes.get(i).waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("the node's iomap mount returned")
                    .isTrue();
            assertThat(nodes.get(i).exitValue()).isZero();
        }
    }

    /**
     * Runs {@code script} with {@code bash -c} in the test's directory.
     *
     * @return what it printed on standard output
     * @throws AssertionError if it does not end with status 0 within {@link #WAIT_SECONDS}
     */
    String bash(String script) throws Exception {
        Path out = dir.resolve("bash.out");
        Path err = dir.resolve("bash.err");
        Process bash = new ProcessBuilder("bash", "-c", script).directory(dir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!bash.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
            bash.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("bash did not end: " + script);
        }
        assertThat(bash.exitValue()).as("bash -c '" + script + "': " + Files.readString(err)).isZero();
        return Files.readString(out);
    }

    /** Lazily unmounts what is still mounted and stops every process, last started first. */
    @Override
    public void close() throws IOException {
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
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while stopping the cluster's processes");
        }
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

}
