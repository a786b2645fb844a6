package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.MountOptions;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The real fio runs the seed's random-write job (scaled down, with crc32c verification) on a mount of
 * each of {@link #mounts()}; after unmount, fsck and remount the files are unchanged and fio's verify
 * pass finds every block it wrote intact (with {@code data=journal}, after the journal took the data).
 * The same job runs on the host file system in the same test, and the bandwidths are reported side by
 * side.
 */
class FuseFioTest {
    static final String SEED_JOB = "/workloads/seed-randwrite-4k.fio";
    /** Mount and host runs alternate, so both see the same (shared, noisy) machine. */
    static final int ROUNDS = 2;

    @TempDir
    Path dir;

    /**
     * The adapters and mount options the job runs on: the end-to-end tests' adapter, gfs2-like with
     * ordered data (its default) and with every file's data through the journal ({@code data=journal}),
     * and bcachefs-like (copy on write, every extent checksummed and verified on read).
     */
    static Stream<Arguments> mounts() {
        return Stream.of(Arguments.of(MountedImage.ADAPTER, ""), Arguments.of("gfs2-like", ""),
                Arguments.of("gfs2-like", "data=journal"), Arguments.of("bcachefs-like", ""));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("mounts")
    void seedRandomWriteJobVerifiesThroughTheMount(String adapter, String adapterOptions) throws Exception {
        MountedImage.assumeFuse();
        assertThat(MountedImage.onPath("fio")).as("fio is not installed (.ci/run installs it)").isTrue();
        Map<String, String> options = MountOptions.parseAdapterOptions(adapterOptions);
        String job = scaledSeedJob();
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, 96L << 20);
        Path host = Files.createDirectories(dir.resolve("host"));

        List<FioRun> onMount = new ArrayList<>();
        List<FioRun> onHost = new ArrayList<>();
        TreeMap<String, Long> checksums;
        long deviceFlushes;
        try (MountedImage mount = MountedImage.mount(adapter, image, dir.resolve("mnt"), FuseMountOptions.defaults(),
                options)) {
            for (int round = 0; round < ROUNDS; round++) {
                onMount.add(FioRun.run(mount.mountPoint, job));
                onHost.add(FioRun.run(host, job));
            }
            checksums = checksums(mount.mountPoint);
            deviceFlushes = mount.stats().device().flushes();
            if ("journal".equals(options.get("data"))) {
                assertThat(mount.stats().adapterCounters()).as("journal commits of file data")
                        .hasEntrySatisfying("journal.dataCommits", commits -> assertThat(commits).isPositive());
            }
            mount.unmount();
        }
        onMount.forEach(FuseFioTest::assertSucceeded);
        long fdatasyncs = onMount.stream().mapToLong(FioRun::syncs).sum();
        assertThat(fdatasyncs).isPositive();
        assertThat(deviceFlushes).as("every fdatasync through the mount flushes the image device")
                .isGreaterThanOrEqualTo(fdatasyncs);
        onHost.forEach(FuseFioTest::assertSucceeded);
        assertThat(checksums).containsOnlyKeys("fio-run.0.0", "fio-run.1.0");

        long verified;
        try (MountedImage again = MountedImage.mount(adapter, image, dir.resolve("mnt"), FuseMountOptions.defaults(),
                options)) {
            assertThat(checksums(again.mountPoint)).isEqualTo(checksums);
            FioRun verify = FioRun.run(again.mountPoint, job, "--verify_only", "--verify_state_load=1");
            assertSucceeded(verify);
            assertThat(verify.readBytes()).as("bytes the verify pass read back; output:%n%s", verify.output())
                    .isPositive();
            again.unmount();
            verified = verify.readBytes();
        }
        report(adapterOptions.isEmpty() ? adapter : adapter + " " + adapterOptions, onMount, onHost, verified,
                fdatasyncs, deviceFlushes);
    }

    /**
     * fio exited 0 and no job had an error (a verify mismatch is EILSEQ). The job's own verify pass
     * runs only if the writes end before {@code runtime}; the {@code --verify_only} run after the
     * remount always checks every block that was written (fio saves how far it got).
     */
    private static void assertSucceeded(FioRun run) {
        assertThat(run.exit()).as("fio exit status; output:%n%s", run.output()).isZero();
        assertThat(run.errors()).as("fio job errors; output:%n%s", run.output()).containsOnly(0L);
        assertThat(run.writeBytes()).as("bytes written; output:%n%s", run.output()).isPositive();
    }

    /** The seed job with size=8m, numjobs=2, runtime=5, and a crc32c verify pass after the writes. */
    static String scaledSeedJob() throws IOException {
        String seed;
        try (InputStream in = FuseFioTest.class.getResourceAsStream(SEED_JOB)) {
            seed = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        return seed.replaceAll("(?m)^(\\s*)size=.*$", "$1size=8m")
                .replaceAll("(?m)^(\\s*)numjobs=.*$", "$1numjobs=2")
                .replaceAll("(?m)^(\\s*)runtime=.*$", "$1runtime=5")
                .replace("[fio-run]", "\tverify=crc32c\n\tdo_verify=1\n\n[fio-run]");
    }

    private static TreeMap<String, Long> checksums(Path dir) throws IOException {
        var sums = new TreeMap<String, Long>();
        try (var files = Files.list(dir)) {
            for (Path file : files.filter(p -> p.getFileName().toString().startsWith("fio-run.")).toList()) {
                var crc = new CRC32C();
                crc.update(Files.readAllBytes(file));
                sums.put(file.getFileName().toString(), crc.getValue());
            }
        }
        return sums;
    }

    /** Prints the table and writes it to target/fio-bandwidth[-VARIANT].md (the default adapter's has no suffix). */
    private static void report(String variant, List<FioRun> onMount, List<FioRun> onHost, long verified,
            long fdatasyncs, long deviceFlushes) throws IOException {
        var table = new StringBuilder(String.format(Locale.ROOT, """
                fio %s, the seed job scaled down (randwrite 4k, fdatasync=1, size=8m numjobs=2 runtime=5,
                verify=crc32c); mount and host runs alternate in one test run
                | round | FUSE mount (%s, direct_io) KiB/s | IOPS | host (%s) KiB/s | IOPS | mount / host |
                |---:|---:|---:|---:|---:|---:|
                """, onMount.getFirst().version(), variant,
                Files.getFileStore(Path.of(System.getProperty("java.io.tmpdir"))).type()));
        for (int round = 0; round < onMount.size(); round++) {
            FioRun mount = onMount.get(round);
            FioRun host = onHost.get(round);
            table.append(String.format(Locale.ROOT, "| %d | %d | %.0f | %d | %.0f | %.2f |%n", round + 1,
                    mount.writeKiBps(), mount.writeIops(), host.writeKiBps(), host.writeIops(),
                    (double) mount.writeKiBps() / Math.max(1, host.writeKiBps())));
        }
        table.append(String.format(Locale.ROOT, "fdatasyncs through the mount: %d; image device flushes: %d%n",
                fdatasyncs, deviceFlushes));
        table.append(String.format(Locale.ROOT,
                "after unmount, fsck and remount: fio --verify_only read back %.1f MiB, 0 errors%n",
                verified / 1048576.0));
        System.out.println(table);
        Path out = Path.of("target", variant.equals(MountedImage.ADAPTER) ? "fio-bandwidth.md"
                : "fio-bandwidth-" + variant.replaceAll("[^A-Za-z0-9.-]+", "-") + ".md");
        if (Files.isDirectory(out.getParent())) {
            Files.writeString(out, table);
        }
    }

    /** One fio run with JSON output, and what the tests read from it. */
    record FioRun(int exit, String output) {
        static FioRun run(Path dir, String job, String... options) throws Exception {
            Path jobFile = dir.resolve("job.fio");
            Files.writeString(jobFile, job);
            List<String> command = new ArrayList<>(List.of("fio", "--output-format=json"));
            command.addAll(List.of(options));
            command.add(jobFile.toString());
            var result = MountedImage.run(dir, command);
            return new FioRun(result.exit(), result.stdout() + result.stderr());
        }

        private String json() {
            int start = output.indexOf('{');
            return start < 0 ? "" : output.substring(start);
        }

        String version() {
            return first("\"fio version\" : \"([^\"]+)\"", json());
        }

        List<Long> errors() {
            return Pattern.compile("\"error\" : (\\d+)").matcher(json()).results()
                    .map(m -> Long.parseLong(m.group(1))).toList();
        }

        private String section(String name) {
            String json = json();
            int start = json.indexOf("\"" + name + "\" : {");
            return start < 0 ? "" : json.substring(start);
        }

        long writeBytes() {
            return Long.parseLong(first("\"io_bytes\" : (\\d+)", section("write")));
        }

        long readBytes() {
            return Long.parseLong(first("\"io_bytes\" : (\\d+)", section("read")));
        }

        long writeKiBps() {
            return Long.parseLong(first("\"bw\" : (\\d+)", section("write")));
        }

        /** @return the fsync/fdatasync calls fio made */
        long syncs() {
            return Long.parseLong(first("\"N\" : (\\d+)", section("sync")));
        }

        double writeIops() {
            return Double.parseDouble(first("\"iops\" : ([\\d.]+)", section("write")));
        }

        private String first(String regex, String text) {
            Matcher matcher = Pattern.compile(regex).matcher(text);
            if (!matcher.find()) {
                throw new AssertionError("no " + regex + " in fio's output:\n" + output);
            }
            return matcher.group(1);
        }
    }
}
