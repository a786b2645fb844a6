package dev.iomap.cluster;

import dev.iomap.devices.LoopbackPorts;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.ClusterSpec;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.FileBlockDevice;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35 item 9, with a paused JVM: node A, a process of its own ({@link LoopingNodeMain}), overwrites
 * and fsyncs a file round after round; it is stopped with {@code SIGSTOP}; node B (this JVM) opens the
 * same file, which it gets only once A's session expired and B recovered A's journal, overwrites it and
 * fsyncs; then A is resumed with {@code SIGCONT}, in the middle of its round. A must write nothing more:
 * a fresh node C reads exactly B's bytes from the image, every round A starts after its resume is
 * refused, and fsck finds the image clean. Real ZooKeeper ({@link EmbeddedZooKeeper}), real processes,
 * the provider's real timeouts (10 s sessions). Runs: {@code iomap.pause.runs} (default 1; the scenario
 * takes about half a minute; bench/cluster-pause.sh runs it many times through the command line).
 */
class PausedNodeTest {
    private static final int BLOCKS = 256;
    private static final String FILE = "/shared";
    private static final long WAIT_SECONDS = 60;

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void stopProcesses() throws InterruptedException {
        for (Process process : processes) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(300)
    void aNodeResumedAfterItsSessionExpiredWritesNothingAndTheOtherNodesFsyncedDataStays() throws Exception {
        int runs = Integer.getInteger("iomap.pause.runs", 1);
        for (int run = 0; run < runs; run++) {
            pauseAndResume(run);
        }
    }

    private void pauseAndResume(int run) throws Exception {
        Path image = dir.resolve("shared-" + run + ".img");
        try (FileBlockDevice device = FileBlockDevice.open(image, LoopingNodeMain.BLOCK, 32L << 20, false)) {
            new Gfs2LikeAdapter().format(device, new FormatOptions(LoopingNodeMain.BLOCK, "pause" + run,
                    Map.of("journals", "3")));
        }
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(dir.resolve("zk-" + run), LoopbackPorts.reserve())) {
            List<String> lines = new CopyOnWriteArrayList<>();
            Process a = startNode(image, zk.connectString(), "a", lines);
            awaitLine(lines, 0, "fsync 2"::equals, a);   // A fsyncs round after round

            byte[] fromB = LoopingNodeMain.pattern(-1, BLOCKS * LoopingNodeMain.BLOCK);
            try (Node b = Node.mount(image, zk, "b")) {
                signal("STOP", a);
                try (IomapFile f = b.fs().open(FILE)) {   // granted once A's session expired and B recovered A
                    f.write(0, ByteBuffer.wrap(fromB));
                    f.fsync();
                }
                int resumedAt = lines.size();
                signal("CONT", a);
                awaitLine(lines, resumedAt + 3, line -> true, a);   // A ran a few rounds after its resume
                a.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                List<String> afterResume = lines.subList(resumedAt, lines.size());

                assertThat(rounds(readAll(image, zk, "c"))).as("whose 8-byte words a fresh node reads from the"
                        + " file (-1: B's, fsync'd; others: A's rounds); A after its resume printed " + afterResume)
                        .isEqualTo(rounds(fromB));
                // The first line may report a round whose fsync returned just before the stop (its line
                // printed after the resume); every round after it must have been refused.
                assertThat(afterResume.subList(1, afterResume.size())).as("A's rounds after its resume: "
                        + afterResume).isNotEmpty().allMatch(line -> line.startsWith("refused "));
            }
        }
        try (FileBlockDevice device = FileBlockDevice.openReadOnly(image, LoopingNodeMain.BLOCK, false)) {
            assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("fsck").isEmpty();
        }
    }

    /** @return how many of the 8-byte words of {@link LoopingNodeMain#pattern} bytes each round wrote */
    private static Map<Long, Integer> rounds(byte[] bytes) {
        Map<Long, Integer> rounds = new TreeMap<>();
        ByteBuffer words = ByteBuffer.wrap(bytes);
        for (int at = 0; at + 8 <= bytes.length; at += 8) {
            rounds.merge(words.getLong(at) >> 40, 1, Integer::sum);
        }
        return rounds;
    }

    /** Mounts a fresh node, reads the whole file, unmounts it. */
    private static byte[] readAll(Path image, EmbeddedZooKeeper zk, String nodeId) throws IOException {
        try (Node node = Node.mount(image, zk, nodeId); IomapFile f = node.fs().open(FILE)) {
            ByteBuffer bytes = ByteBuffer.allocate((int) node.fs().stat(FILE).size());
            while (bytes.hasRemaining() && f.read(bytes.position(), bytes) > 0) {
                // reads until full or EOF
            }
            return Arrays.copyOf(bytes.array(), bytes.position());
        }
    }

    /** A node of this JVM: its mount and its device (which the mount does not close). */
    private record Node(IomapFileSystem fs, FileBlockDevice device) implements AutoCloseable {
        static Node mount(Path image, EmbeddedZooKeeper zk, String nodeId) throws IOException {
            FileBlockDevice device = FileBlockDevice.openShared(image, LoopingNodeMain.BLOCK, true);
            ClusterSpec cluster = ClusterSpec.parse("zk=" + zk.connectString()).withNodeId(nodeId);
            try {
                return new Node(CoreRuntime.mount(new Gfs2LikeAdapter(), device,
                        new MountOptions(PageCacheOptions.defaults(), true).withCluster(cluster)), device);
            } catch (IOException | RuntimeException e) {
                device.close();
                throw e;
            }
        }

        @Override
        public void close() throws IOException {
            try (device) {
                fs.close();
            }
        }
    }

    /** Starts {@link LoopingNodeMain} in a new JVM on the test class path; its stdout lines go to {@code lines}. */
    private Process startNode(Path image, String connect, String nodeId, List<String> lines) throws IOException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process process = new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC",
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                "-cp", System.getProperty("java.class.path"), LoopingNodeMain.class.getName(),
                image.toString(), connect, nodeId, FILE, Integer.toString(BLOCKS))
                .redirectError(dir.resolve(nodeId + ".err").toFile()).start();
        processes.add(process);
        Thread.ofPlatform().daemon().name("node-" + nodeId + "-stdout").start(() -> {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("stdout lost: " + e);
            }
        });
        return process;
    }

    /** Waits until a line at or after {@code from} matches (or, for {@code line -> true}, until that many lines). */
    private void awaitLine(List<String> lines, int from, Predicate<String> wanted, Process node) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (lines.size() <= from || lines.subList(from, lines.size()).stream().noneMatch(wanted)) {
            if (!node.isAlive() || System.nanoTime() > end) {
                throw new AssertionError("node did not get there (alive: " + node.isAlive() + "); stdout " + lines
                        + "; stderr " + java.nio.file.Files.readString(dir.resolve("a.err")));
            }
            Thread.sleep(20);
        }
    }

    private static void signal(String name, Process process) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).as("kill -" + name).isZero();
    }

}
