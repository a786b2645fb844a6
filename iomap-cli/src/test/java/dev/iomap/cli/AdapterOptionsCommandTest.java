package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code -O KEY[=VALUE]} on bench, stat and mount, adapter counters in bench's reports, and
 * {@code --compare} over adapters and adapter options. The adapter options and counters reaching
 * the reports are those of {@value CountingSnapfsPlugin#NAME} ({@link CountingSnapfsPlugin}: 64
 * fdatasyncs in the job below, counted by the adapter); the refusals are xfs-like's and snapfs's
 * own messages. Counters and table structure are asserted exactly, speeds never.
 */
class AdapterOptionsCommandTest {
    /** 64 random 4 KiB writes, each followed by fdatasync: 64 fsync calls reach the adapter. */
    private static final String TINY = String.join("\n",
            "[global]", "ioengine=psync", "rw=randwrite", "bs=4k", "size=256k", "fdatasync=1", "[tiny]");

    @TempDir
    Path dir;

    private String job() throws IOException {
        return Files.writeString(dir.resolve("tiny.fio"), TINY + "\n").toString();
    }

    private static Cli bench(String... args) {
        List<String> full = new ArrayList<>(List.of("bench", "--progress=never", "--device=ram:64m", "--no-flusher"));
        full.addAll(Arrays.asList(args));
        return Cli.run(full.toArray(String[]::new));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(Cli cli) {
        return (Map<String, Object>) MiniJson.parse(cli.out());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> firstJobIomap(Map<String, Object> root) {
        var job = (Map<String, Object>) ((List<Object>) root.get("jobs")).getFirst();
        return MiniJson.object(job, "iomap");
    }

    /** @return the first column of the comparison table, header included */
    private static List<String> rowLabels(String table) {
        return table.lines().skip(2).map(line -> line.split(" {2,}")[0]).toList();
    }

    @Test
    void benchPassesTheOptionsAndReportsTheNonzeroCounters() throws IOException {
        Cli cli = bench("--adapter=" + CountingSnapfsPlugin.NAME, "-O", "weight=3", job());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.out()).contains(", state lock COMBINED, fs options weight=3\n")
                .contains("\n  folios   : order 0=64\n  adapter  : fsyncs=64, fsyncs.weighted=192\n")
                .doesNotContain("never");
    }

    @Test
    void benchJsonHasTheOptionsAndTheNonzeroCounters() throws IOException {
        Cli cli = bench("--adapter=" + CountingSnapfsPlugin.NAME, "--fs-option=weight=2", "--output-format=json",
                job());

        assertThat(cli.status()).as(cli.err()).isZero();
        Map<String, Object> root = json(cli);
        assertThat(MiniJson.object(MiniJson.object(root, "iomap"), "fs_options")).isEqualTo(Map.of("weight", "2"));
        assertThat(MiniJson.object(firstJobIomap(root), "adapter_counters"))
                .isEqualTo(Map.of("fsyncs", 64L, "fsyncs.weighted", 128L));
    }

    @Test
    void anAdapterWithoutCountersReportsNone() throws IOException {
        String job = job();
        Cli text = bench("--adapter=snapfs", job);
        Cli json = bench("--adapter=snapfs", "--output-format=json", job);

        assertThat(text.status()).as(text.err()).isZero();
        assertThat(text.out()).doesNotContain("  adapter  :").doesNotContain("fs options");
        assertThat(json.status()).as(json.err()).isZero();
        Map<String, Object> root = json(json);
        assertThat(firstJobIomap(root)).doesNotContainKey("adapter_counters");
        assertThat(MiniJson.object(MiniJson.object(root, "iomap"), "fs_options")).isEmpty();
    }

    @Test
    void anOptionTheAdapterDoesNotKnowIsRefusedWithItsMessage() throws IOException {
        String job = job();

        Cli xfs = bench("-O", "data=journal,journal=1", job);
        Cli snapfs = bench("--adapter=snapfs", "-O", "weight=1", job);
        Cli counting = bench("--adapter=" + CountingSnapfsPlugin.NAME, "-O", "weight=1", "-O", "data", job);

        assertThat(xfs.status()).isEqualTo(1);
        assertThat(xfs.err()).isEqualTo("iomap: xfs-like: unknown mount option 'data' (it takes none)\n");
        assertThat(snapfs.status()).isEqualTo(1);
        assertThat(snapfs.err()).isEqualTo("iomap: snapfs: unknown mount option 'weight' (it takes none)\n");
        assertThat(counting.status()).isEqualTo(1);
        assertThat(counting.err()).isEqualTo("iomap: counting-snapfs: unknown mount option 'data' (known: [weight])\n");
    }

    @Test
    void malformedOptionsAreUsageErrors() throws IOException {
        String job = job();

        assertThat(bench("-O", "a,,b", job).err()).isEqualTo("iomap: bad -O 'a,,b': mount option without a name"
                + " in 'a,,b'\n");
        assertThat(bench("-O", "data=ordered", "-O", "data=journal", job).err())
                .isEqualTo("iomap: -O data given twice\n");
        assertThat(bench("-O", "", job).status()).isEqualTo(1);
    }

    @Test
    void compareAdaptersFormatsEachWithItsOwnAdapterInOneTable() throws IOException {
        Cli cli = bench("--compare", "adapter=xfs-like,snapfs", job());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.err()).isEqualTo("run 1/2: adapter=xfs-like\nrun 2/2: adapter=snapfs\n");
        assertThat(cli.out()).startsWith("compare adapter: xfs-like vs snapfs (block size 4096, page size 4096,"
                + " device ram:64m; mean of 1 run each, alternating)\n\n");
        assertThat(cli.out()).containsPattern("\nmetric +adapter=xfs-like +adapter=snapfs +snapfs/xfs-like\n")
                .containsPattern("\napp written \\(MiB\\) +0\\.25 +0\\.25 +1\\.000\n")
                .containsPattern("\ndata written \\(MiB\\) +0\\.25 +0\\.25 +1\\.000\n")
                .containsPattern("\nmetadata written \\(MiB\\) +(?!0\\.00 )[0-9]+\\.[0-9]{2} +0\\.00 +0\\.000\n")
                .containsPattern("\nwrite amplification +[1-9][0-9]*\\.[0-9]{3} +1\\.000 +0\\.[0-9]{3}\n");
        assertThat(rowLabels(cli.out())).containsExactly("metric", "write bw (MiB/s)", "write IOPS",
                "write clat p50 (us)", "write clat p99 (us)", "sync p99 (us)", "app written (MiB)",
                "data written (MiB)", "metadata written (MiB)", "write amplification", "device written (MiB)",
                "map_blocks calls", "ioends", "folios of order 0");
    }

    @Test
    @SuppressWarnings("unchecked")
    void compareAdaptersAsJsonNamesEachRunsAdapter() throws IOException {
        Cli cli = bench("--compare", "adapter=snapfs,xfs-like", "--output-format=json", job());

        assertThat(cli.status()).as(cli.err()).isZero();
        Map<String, Object> root = json(cli);
        Map<String, Object> compare = MiniJson.object(root, "compare");
        assertThat(compare).containsEntry("key", "adapter");
        assertThat((List<Object>) compare.get("values")).containsExactly(
                Map.of("value", "snapfs", "adapter", "snapfs", "fs_options", Map.of()),
                Map.of("value", "xfs-like", "adapter", "xfs-like", "fs_options", Map.of()));
        List<Object> runs = (List<Object>) root.get("runs");
        assertThat(runs).hasSize(2);
        assertThat(runs.stream().map(run -> MiniJson.object((Map<String, Object>) run, "iomap").get("adapter")))
                .containsExactly("snapfs", "xfs-like");
        assertThat(MiniJson.object(MiniJson.object(compare, "metrics"), "data_written_mib"))
                .containsEntry("snapfs", 0.25).containsEntry("xfs-like", 0.25);
    }

    @Test
    void compareAdaptersOnAFileDeviceFormatsItAgainForEach() throws IOException {
        Path image = dir.resolve("bench.img");

        Cli cli = Cli.run("bench", "--progress=never", "--no-flusher", "--device=file:" + image, "--compare",
                "adapter=xfs-like,snapfs", "--output-format=json", job());

        assertThat(cli.status()).as(cli.err()).isZero();
        @SuppressWarnings("unchecked")
        List<Object> runs = (List<Object>) json(cli).get("runs");
        @SuppressWarnings("unchecked")
        List<Object> adapters = runs.stream()
                .map(run -> MiniJson.object((Map<String, Object>) run, "iomap").get("adapter")).toList();
        assertThat(adapters).containsExactly("xfs-like", "snapfs");
        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.err()).isZero();
        assertThat(fsck.out()).contains("clean (snapfs");
    }

    @Test
    void compareAnAdapterOptionShowsTheCountersAsRows() throws IOException {
        Cli cli = bench("--adapter=" + CountingSnapfsPlugin.NAME, "--compare", "fs.weight=1,3", job());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.out()).startsWith("compare fs.weight: 1 vs 3 (adapter counting-snapfs, block size 4096,")
                .containsPattern("\nmetric +fs.weight=1 +fs.weight=3 +3/1\n")
                .containsPattern("\nadapter: fsyncs +64 +64 +1\\.000\n")
                .containsPattern("\nadapter: fsyncs.weighted +64 +192 +3\\.000\n")
                .doesNotContain("never");
        assertThat(rowLabels(cli.out())).endsWith("folios of order 0", "adapter: fsyncs", "adapter: fsyncs.weighted");
    }

    @Test
    void compareAdaptersWithTheirOwnOptions() throws IOException {
        Cli cli = bench("-O", "weight=2", "--compare",
                "adapter=" + CountingSnapfsPlugin.NAME + "," + CountingSnapfsPlugin.NAME + ":weight=5", job());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.err()).contains("run 2/2: adapter=counting-snapfs:weight=5\n");
        assertThat(cli.out()).contains(", -O weight=2; mean of 1 run each")
                .containsPattern("\nmetric +adapter=counting-snapfs +adapter=counting-snapfs:weight=5"
                        + " +counting-snapfs:weight=5/counting-snapfs\n")
                .containsPattern("\nadapter: fsyncs.weighted +128 +320 +2\\.500\n");
    }

    @Test
    void badComparisonsAreUsageErrors() throws IOException {
        String job = job();

        assertThat(bench("--adapter=snapfs", "--compare", "adapter=xfs-like,snapfs", job).err())
                .isEqualTo("iomap: --adapter snapfs and --compare adapter=... both choose the adapter: give one\n");
        assertThat(bench("--compare", "adapter=xfs-like,:weight=1", job).err())
                .startsWith("iomap: bad --compare 'adapter=xfs-like,:weight=1': ':weight=1' names no adapter, e.g.");
        assertThat(bench("--compare", "fs.=a,b", job).err())
                .startsWith("iomap: bad --compare 'fs.=a,b': name the adapter option after 'fs.', e.g.");
        assertThat(bench("--compare", "adapter=xfs-like", job).err())
                .startsWith("iomap: bad --compare 'adapter=xfs-like': give a key and two or more values, e.g.");
        Cli unknown = bench("--compare", "adapter=xfs-like,nosuch", job);
        assertThat(unknown.err()).isEqualTo("iomap: bad --compare 'adapter=xfs-like,nosuch': no adapter named 'nosuch'"
                + " (adapters: bcachefs-like, counting-snapfs, gfs2-like, snapfs, xfs-like, zonefs-like)\n");
        Cli refused = bench("--compare", "adapter=snapfs,xfs-like:data=journal", job);
        assertThat(refused.status()).isEqualTo(1);
        assertThat(refused.err()).endsWith("iomap: xfs-like: unknown mount option 'data' (it takes none)\n");
    }

    @Test
    void statRefusesAnOptionWithTheAdaptersMessageAndShowsNoCountersWithoutThem() throws IOException {
        Path image = dir.resolve("x.img");
        Cli mkfs = Cli.run("mkfs", "--size=32m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();

        Cli refused = Cli.run("stat", "-O", "data=journal", image.toString());
        Cli plain = Cli.run("stat", image.toString());

        assertThat(refused.status()).isEqualTo(1);
        assertThat(refused.err()).isEqualTo("iomap: xfs-like: unknown mount option 'data' (it takes none)\n");
        assertThat(plain.status()).as(plain.err()).isZero();
        assertThat(plain.out()).contains("adapter      : xfs-like").doesNotContain("fs options").doesNotContain("adapter ctrs");
    }

    @Test
    void mountRefusesAnOptionBeforeMounting() throws IOException {
        Path image = dir.resolve("x.img");
        Path mountPoint = Files.createDirectory(dir.resolve("mnt"));
        Cli mkfs = Cli.run("mkfs", "--size=32m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();

        Cli refused = Cli.run("mount", "--fs-option", "journal=1", image.toString(), mountPoint.toString());

        assertThat(refused.status()).isEqualTo(1);
        assertThat(refused.err()).isEqualTo("iomap: xfs-like: unknown mount option 'journal' (it takes none)\n");
        assertThat(Cli.run("fsck", image.toString()).status()).isZero();
    }
}
