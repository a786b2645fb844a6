package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 41's "done when", end to end with the real commands: {@code iomap mount --metrics 127.0.0.1:0} of an
 * image in its own JVM (a FUSE mount), {@code iomap trace MOUNTPOINT -e iomap_writeback_folio} in another JVM,
 * a {@code dd ... conv=fsync} into the mount; the trace prints the file's writeback as trace-cmd would, the
 * mount's {@code /metrics} counts the bytes {@code dd} wrote, and the unmount ends the trace with status 0.
 * Both JVMs find each other through a runtime directory of the test's own ({@code XDG_RUNTIME_DIR}).
 */
@Timeout(180)
class TraceAndMetricsThroughMountTest {
    /** How long a JVM may take to start, a mount to appear or a process to end, on a loaded machine. */
    private static final long WAIT_SECONDS = 60;
    private static final Pattern METRICS_AT = Pattern.compile("iomap: metrics at (http://127\\.0\\.0\\.1:\\d+/metrics)");

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();
    private final ExecutorService reader = Executors.newSingleThreadExecutor();
    private Path mountPoint;

    @AfterEach
    void stopEverything() throws Exception {
        reader.shutdownNow();
        if (mountPoint != null && mounted(mountPoint)) {
            new ProcessBuilder("fusermount3", "-u", "-z", mountPoint.toString()).inheritIO().start()
                    .waitFor(10, TimeUnit.SECONDS);
        }
        for (Process process : processes) {
            process.destroy();
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void traceShowsTheWritebackOfADdIntoALiveMountAndMetricsCountItsBytes() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "FUSE mount test skipped: /dev/fuse is absent");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/fusermount3")) || Files.isExecutable(Path.of("/bin/fusermount3")),
                "FUSE mount test skipped: fusermount3 is not installed");
        Path image = dir.resolve("x.img");
        Cli mkfs = Cli.run("mkfs", "--size", "64m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        Path xdg = Files.createDirectory(dir.resolve("xdg"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        mountPoint = Files.createDirectory(dir.resolve("mnt"));

        Path mountErr = dir.resolve("mount.err");
        Process mount = start(xdg, mountErr, "mount", "--metrics", "127.0.0.1:0", image.toString(), mountPoint.toString());
        String metricsUrl = awaitMount(mount, mountErr);

        Path traceErr = dir.resolve("trace.err");
        Process trace = start(xdg, traceErr, "trace", mountPoint.toString(), "-e", "iomap_writeback_folio");
        BufferedReader traceOut = new BufferedReader(new InputStreamReader(trace.getInputStream(), StandardCharsets.UTF_8));
        awaitLine(trace, traceErr, "iomap: tracing iomap:iomap_writeback_folio at ");

        Process dd = new ProcessBuilder("dd", "if=/dev/zero", "of=" + mountPoint.resolve("f"), "bs=64k", "count=16",
                "conv=fsync", "status=none").redirectErrorStream(true).start();
        processes.add(dd);
        assertThat(dd.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("dd returned").isTrue();
        long ddReturned = System.nanoTime();
        assertThat(dd.exitValue()).as(new String(dd.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();

        Future<String> firstLine = reader.submit(traceOut::readLine);
        String line = firstLine.get(WAIT_SECONDS, TimeUnit.SECONDS);
        // Reported, not asserted (no speed asserts): the "within a second".
        System.out.printf("first iomap_writeback_folio line %d ms after dd returned%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ddReturned));
        assertThat(line).as("a trace-cmd stream line of the 1 MiB file's writeback")
                .matches(" *\\S+-\\d+ +\\[000\\] +\\d+\\.\\d{6}: iomap_writeback_folio: ino 0x[0-9a-f]+ size 0x100000"
                        + " offset 0x[0-9a-f]+ length 0x[0-9a-f]+ order \\d+");

        String metrics = scrape(metricsUrl);
        assertThat(metrics).contains("# TYPE iomap_app_written_bytes_total counter",
                "\niomap_app_written_bytes_total 1048576.0\n", "iomap_device_written_bytes_total{purpose=\"data\"} ");
        assertThat(entries(xdg.resolve("iomap"))).as("the mount's runtime file").hasSize(2);

        Process fusermount = new ProcessBuilder("fusermount3", "-u", mountPoint.toString()).inheritIO().start();
        assertThat(fusermount.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(mount.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("iomap mount returned").isTrue();
        assertThat(mount.exitValue()).as(Files.readString(mountErr)).isZero();
        assertThat(trace.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("iomap trace ended with the mount").isTrue();
        assertThat(trace.exitValue()).as(Files.readString(traceErr)).isZero();
        assertThat(entries(xdg.resolve("iomap"))).as("the runtime file and socket, gone").isEmpty();
    }

    /** @return the metrics address the mount printed, once the kernel lists the mount */
    private String awaitMount(Process mount, Path err) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        for (;; Thread.sleep(50)) {
            Matcher metrics = METRICS_AT.matcher(Files.readString(err));
            if (mounted(mountPoint) && metrics.find()) {
                return metrics.group(1);
            }
            if (!mount.isAlive() || System.nanoTime() > end) {
                throw new AssertionError("the mount did not appear (alive: " + mount.isAlive() + "): "
                        + Files.readString(err));
            }
        }
    }

    /** Waits until {@code err} holds a line starting with {@code prefix}. */
    private static void awaitLine(Process process, Path err, String prefix) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (Files.readAllLines(err).stream().noneMatch(line -> line.startsWith(prefix))) {
            if (!process.isAlive() || System.nanoTime() > end) {
                throw new AssertionError("no line '" + prefix + "...' (alive: " + process.isAlive() + "): "
                        + Files.readString(err));
            }
            Thread.sleep(50);
        }
    }

    private static String scrape(String url) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            return response.body();
        }
    }

    /** Runs {@code iomap ARGS} in a new JVM on the test class path with {@code xdg} as its runtime directory. */
    private Process start(Path xdg, Path err, String... args) throws IOException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-cp", System.getProperty("java.class.path"),
                IomapCli.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(err.toFile());
        Map<String, String> env = builder.environment();
        env.put("XDG_RUNTIME_DIR", xdg.toString());
        Process process = builder.start();
        processes.add(process);
        return process;
    }

    private static List<Path> entries(Path directory) throws IOException {
        try (Stream<Path> entries = Files.list(directory)) {
            return entries.toList();
        }
    }

    /** @return whether the kernel lists a mount on {@code mountPoint} (in /proc/self/mountinfo) */
    private static boolean mounted(Path mountPoint) throws IOException {
        String target = " " + mountPoint.toRealPath() + " ";
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().anyMatch(line -> line.contains(target));
    }
}
