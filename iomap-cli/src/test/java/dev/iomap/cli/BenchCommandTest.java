package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code iomap bench} end to end on snapfs declared without DURABLE_FSYNC
 * ({@link SnapfsWithoutDurableFsyncPlugin}): fsync commits no metadata, so the device traffic of a
 * job is exactly the data written back and counters are asserted exactly; times never are.
 */
class BenchCommandTest {
    private static final String TINY = String.join("\n",
            "; a tiny job: 64 random 4 KiB writes, each followed by fdatasync",
            "[global]",
            "ioengine=psync",
            "rw=randwrite",
            "bs=4k",
            "size=256k",
            "fdatasync=1",
            "[tiny]");

    @TempDir
    Path dir;

    private Path job(String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text + "\n");
    }

    private static Cli bench(String... args) {
        String[] full = new String[args.length + 4];
        full[0] = "bench";
        full[1] = "--adapter=" + SnapAdapter.NAME;
        full[2] = "--progress=never";
        full[3] = "--device=ram:64m";
        System.arraycopy(args, 0, full, 4, args.length);
        return Cli.run(full);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> firstJob(Cli cli) {
        Object root = MiniJson.parse(cli.out());
        return (Map<String, Object>) ((List<Object>) ((Map<String, Object>) root).get("jobs")).getFirst();
    }

    @Test
    void aTinyRandomWriteJobCountsExactly() throws IOException {
        Cli cli = bench("--output-format=json", job("tiny.fio", TINY).toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        Map<String, Object> job = firstJob(cli);
        Map<String, Object> write = MiniJson.object(job, "write");
        assertThat(write).containsEntry("total_ios", 64L).containsEntry("io_bytes", 262144L);
        assertThat(MiniJson.object(job, "read")).containsEntry("total_ios", 0L);
        assertThat(MiniJson.object(job, "sync")).containsEntry("total_ios", 64L);
        assertThat(MiniJson.object(MiniJson.object(job, "sync"), "lat_ns")).containsEntry("N", 64L);
        Map<String, Object> iomap = MiniJson.object(job, "iomap");
        assertThat(iomap)
                .containsEntry("app_bytes_written", 262144L)
                .containsEntry("device_data_bytes_written", 262144L)
                .containsEntry("device_metadata_bytes_written", 0L)
                .containsEntry("device_bytes_written", 262144L)
                .containsEntry("write_amplification", 1.0)
                .containsEntry("device_bytes_read", 0L)
                .containsEntry("device_writes", 64L);
        assertThat(MiniJson.object(iomap, "folios_by_order")).containsEntry("0", 64L);
    }

    @Test
    void uncachedReadsGoToTheDeviceOnEveryPass() throws IOException {
        String read = String.join("\n", "[global]", "ioengine=psync", "rw=read", "bs=4k", "size=256k", "loops=2",
                "[pass]");
        Cli cached = bench("--output-format=json", job("cached.fio", read).toString());
        Cli uncached = bench("--output-format=json", job("uncached.fio", read + "\nuncached=1").toString());

        assertThat(cached.status()).as(cached.err()).isZero();
        assertThat(uncached.status()).as(uncached.err()).isZero();
        assertThat(MiniJson.object(firstJob(cached), "iomap")).containsEntry("device_bytes_read", 262144L);
        assertThat(MiniJson.object(firstJob(uncached), "iomap")).containsEntry("device_bytes_read", 524288L);
    }

    @Test
    void theNormalOutputHasFiosLayout() throws IOException {
        Cli cli = bench(job("tiny.fio", TINY).toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.out())
                .contains("tiny: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B,"
                        + " ioengine=psync, iodepth=1")
                .contains("Starting 1 thread\n")
                .contains("tiny: Laying out IO file (1 file / 0MiB)")
                .contains("tiny: (groupid=0, jobs=1): err= 0: pid=")
                .containsPattern("  write: IOPS=[0-9.k]+, BW=[0-9.]+[KMG]iB/s \\([0-9.]+[kMG]B/s\\)\\(256KiB/[0-9]+msec\\)")
                .containsPattern("    clat \\((nsec|usec|msec)\\): min=")
                .containsPattern("     \\|  1\\.00th=\\[ *[0-9]+\\],  5\\.00th=")
                .contains("  fsync/fdatasync/sync_file_range:")
                .contains("     issued rwts: total=0,64,0,0")
                .contains("Run status group 0 (all jobs):")
                .containsPattern("  WRITE: bw=.*, io=256KiB \\(262kB\\), run=[0-9]+-[0-9]+msec")
                .contains("  write amplification=1.000")
                .contains("  folios   : order 0=64");
        assertThat(cli.err()).isEmpty();
    }

    @Test
    void groupReportingMergesTheThreadsAndEachThreadHasItsOwnFile() throws IOException {
        Path file = job("two.fio", TINY + "\nnumjobs=2\ngroup_reporting=1\nnrfiles=2\ndirectory=/data");

        Cli cli = bench("--output-format=json", file.toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        Map<String, Object> job = firstJob(cli);
        assertThat(MiniJson.object(job, "write")).containsEntry("total_ios", 128L).containsEntry("io_bytes", 524288L);
        assertThat(MiniJson.object(job, "iomap")).containsEntry("app_bytes_written", 524288L);
        assertThat(cli.out()).contains("\"jobname\" : \"tiny\"");
    }

    @Test
    void withoutGroupReportingEachThreadIsReported() throws IOException {
        Cli cli = bench(job("two.fio", TINY + "\nnumjobs=2").toString());

        assertThat(cli.out()).contains("tiny: (g=0)").contains("...\n").contains("Starting 2 threads");
        assertThat(cli.out().split("tiny: \\(groupid=0, jobs=1\\)", -1)).hasSize(3);
    }

    @Test
    void aReadJobLaysItsFileOutAndReadsItAll() throws IOException {
        Path file = job("read.fio", "[reader]\nrw=read\nbs=8k\nsize=128k\nloops=2");

        Cli cli = bench("--output-format=json", file.toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        Map<String, Object> job = firstJob(cli);
        assertThat(MiniJson.object(job, "read")).containsEntry("total_ios", 32L).containsEntry("io_bytes", 262144L);
        assertThat(MiniJson.object(job, "iomap"))
                .as("the cache was dropped after the layout, so the first pass reads the device")
                .containsEntry("device_bytes_read", 131072L)
                .containsEntry("app_bytes_read", 262144L)
                .containsEntry("app_bytes_written", 0L);
    }

    @Test
    void aMixedJobSplitsItsIosBetweenReadsAndWrites() throws IOException {
        Path file = job("mixed.fio", "[mixed]\nrw=randrw\nrwmixread=70\nbs=4k\nsize=1m");

        Cli cli = bench("--output-format=json", file.toString());

        Map<String, Object> job = firstJob(cli);
        long reads = (Long) MiniJson.object(job, "read").get("total_ios");
        long writes = (Long) MiniJson.object(job, "write").get("total_ios");
        assertThat(reads + writes).isEqualTo(256);
        assertThat(reads).isBetween(128L, 230L);
    }

    @Test
    void aTimeBasedJobLoopsOverItsFileUntilTheRuntimeEnds() throws IOException {
        Path file = job("timed.fio", "[timed]\nrw=write\nbs=4k\nsize=64k\ntime_based=1\nruntime=300ms");

        Cli cli = bench("--output-format=json", file.toString());

        Map<String, Object> write = MiniJson.object(firstJob(cli), "write");
        assertThat((Long) write.get("total_ios")).as("more than one pass over 16 blocks").isGreaterThan(16);
    }

    @Test
    void nothingDoneDuringTheRampTimeIsMeasured() throws IOException {
        Path file = job("ramp.fio", TINY + "\nramp_time=1h");

        Cli cli = bench("--output-format=json", file.toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        Map<String, Object> job = firstJob(cli);
        assertThat(MiniJson.object(job, "write")).containsEntry("total_ios", 0L).containsEntry("runtime", 0L);
        assertThat(MiniJson.object(job, "sync")).containsEntry("total_ios", 0L);
        assertThat(MiniJson.object(job, "iomap")).containsEntry("app_bytes_written", 0L)
                .containsEntry("device_bytes_written", 0L);
    }

    @Test
    void compareRunsEachValueAndPrintsTwoColumnsAndARatio() throws IOException {
        Path file = job("cmp.fio", String.join("\n",
                "[cmp]", "rw=randwrite", "bs=4k", "size=512k", "overwrite=1", "pre_read=1", "fdatasync=1"));

        Cli cli = bench("--page-size=64k", "--compare", "perBlockDirty=false,true", file.toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.err()).contains("run 1/2: perBlockDirty=false").contains("run 2/2: perBlockDirty=true");
        assertThat(cli.out())
                .contains("compare perBlockDirty: false vs true")
                .containsPattern("metric +perBlockDirty=false +perBlockDirty=true +true/false\n")
                .containsPattern("write amplification +16\\.000 +1\\.000 +0\\.063\n")
                .containsPattern("device written \\(MiB\\) +8\\.00 +0\\.50 +0\\.063\n")
                .containsPattern("write bw \\(MiB/s\\) +[0-9.]+ +[0-9.]+ +[0-9.]+\n");
    }

    @Test
    void compareAsJsonHasTheMetricsAndEveryRun() throws IOException {
        Path file = job("cmp.fio", TINY);

        Cli cli = bench("--compare=maxFolioOrder=0,2", "--repeat=2", "--output-format=json", file.toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        @SuppressWarnings("unchecked")
        Map<String, Object> root = (Map<String, Object>) MiniJson.parse(cli.out());
        Map<String, Object> compare = MiniJson.object(root, "compare");
        assertThat(compare).containsEntry("key", "maxFolioOrder").containsEntry("repeat", 2L);
        assertThat(MiniJson.object(MiniJson.object(compare, "metrics"), "write_amplification"))
                .containsEntry("0", 1.0).containsEntry("2", 1.0).containsEntry("2/0", 1.0);
        assertThat((List<?>) root.get("runs")).hasSize(4);
    }

    @Test
    void directIoIsRefusedForAnAdapterWithoutItNamingTheLineAndTheAdapter() throws IOException {
        Path file = job("direct.fio", TINY + "\ndirect=1");

        Cli cli = bench(file.toString());

        assertThat(cli.status()).isEqualTo(1);
        assertThat(cli.err()).contains("iomap: direct=1 at " + file + ":9: adapter 'snapfs' does not support"
                + " direct I/O");
    }

    @Test
    void directIoRunsOnAnAdapterWithItAndBypassesTheCache() throws IOException {
        Path file = job("direct.fio", TINY + "\ndirect=1");

        Cli cli = Cli.run("bench", "--adapter=xfs-like", "--progress=never", "--device=ram:64m", file.toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.out()).contains("issued rwts: total=0,64,0,0 ")
                .contains("  app      : written=256KiB, read=0B\n")
                .contains("(data=256KiB, metadata=")
                .as("the 64 writes went to the device directly: no buffered writeback at all")
                .contains("  writeback: map_blocks=0, ioends=0, folio states allocated=0\n");
    }

    @Test
    void atomicWritesAreRefusedForAnAdapterWithoutThemNamingTheLineAndTheAdapter() throws IOException {
        Path file = job("atomic.fio", TINY + "\ndirect=1\natomic=1");

        Cli cli = Cli.run("bench", "--adapter=gfs2-like", "--progress=never", "--device=ram:64m", file.toString());

        assertThat(cli.status()).isEqualTo(1);
        assertThat(cli.err()).contains("iomap: atomic=1 at " + file + ":10: adapter 'gfs2-like' does not support"
                + " atomic writes");
    }

    /** 64 random 4 KiB atomic writes on xfs-like: each staged in the COW fork and remapped, none in place. */
    @Test
    void atomicWritesRunOnAnAdapterWithThem() throws IOException {
        Path file = job("atomic.fio", TINY + "\ndirect=1\natomic=1");

        Cli cli = Cli.run("bench", "--adapter=xfs-like", "--progress=never", "--device=ram:64m", file.toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.out()).contains("issued rwts: total=0,64,0,0 ")
                .contains("  app      : written=256KiB, read=0B\n")
                .contains("(data=256KiB, metadata=")
                .contains("  writeback: map_blocks=0, ioends=0, folio states allocated=0\n");
    }

    @Test
    void anUnknownOptionStopsTheRunWithItsLine() throws IOException {
        Path file = job("bad.fio", TINY + "\nbogus=1");

        Cli cli = bench(file.toString());

        assertThat(cli.status()).isEqualTo(1);
        assertThat(cli.err()).isEqualTo("iomap: unknown option 'bogus' at " + file + ":9\n");
        assertThat(cli.out()).isEmpty();
    }

    @Test
    void anUnknownEngineIsReplacedWithANote() throws IOException {
        Cli cli = bench(job("engine.fio", TINY + "\nioengine=mmap\niodepth=16").toString());

        assertThat(cli.status()).isZero();
        assertThat(cli.err()).contains("tiny: ioengine=mmap is not supported, using psync")
                .contains("queue depth will be capped at 1");
    }

    /**
     * io_uring at depth 8: 64 random direct 4 KiB writes in flight 8 at a time, each one block once
     * (fio's random map), the bytes exact, fio's depth histogram at 8.
     */
    @Test
    void anAsynchronousEngineKeepsIodepthRequestsInFlight() throws IOException {
        String text = String.join("\n", "[global]", "ioengine=io_uring", "iodepth=8", "rw=randwrite", "bs=4k",
                "size=256k", "direct=1", "[deep]");
        Cli cli = Cli.run("bench", "--adapter=xfs-like", "--progress=never", "--device=ram:64m",
                job("deep.fio", text).toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.err()).doesNotContain("not supported").doesNotContain("capped");
        assertThat(cli.out()).contains("issued rwts: total=0,64,0,0 ")
                .contains("  app      : written=256KiB, read=0B\n")
                .contains("(data=256KiB, metadata=")
                .contains("IO depths    : 1=0.0%, 2=0.0%, 4=0.0%, 8=100.0%, 16=0.0%, 32=0.0%, >=64=0.0%");
    }

    @Test
    void usageErrorsExitWithOne() throws IOException {
        Path file = job("tiny.fio", TINY);

        assertThat(bench("--set", "nosuch=1", file.toString()).err()).contains("valid keys: [pageSize,");
        assertThat(bench("--compare", "perBlockDirty=true", file.toString()).status()).isEqualTo(1);
        assertThat(Cli.run("bench", "--adapter=nosuch", "--progress=never", file.toString()).err())
                .contains("no adapter named 'nosuch'");
        assertThat(bench(dir.resolve("missing.fio").toString()).err()).contains("does not exist");
        assertThat(bench("--output-format=xml", file.toString()).err()).contains("bad --output-format");
        assertThat(Cli.run("bench", "--adapter=snapfs", "--device=ram:128k", "--progress=never", file.toString()).err())
                .contains("the device holds 128KiB but the jobs' files need 256KiB");
        Path image = dir.resolve("small.img");
        assertThat(Cli.run("bench", "--adapter=snapfs", "--device=file:" + image + ",size=128k", "--progress=never",
                file.toString()).err())
                .contains("the device holds 128KiB but the jobs' files need 256KiB: give a larger size"
                        + " (ram:SIZE, file:PATH,size=SIZE), or none");
        assertThat(image).as("refused before the image is made").doesNotExist();
        assertThat(dir.resolve("small.img,size=128k")).doesNotExist();
    }

    @Test
    void aWarmUpRunsTheJobsOnRamFirstAndOnlyTheLastRunIsReported() throws IOException {
        Path image = dir.resolve("warm.img");

        Cli cli = Cli.run("bench", "--adapter=snapfs", "--progress=never", "--device=file:" + image, "--warmup=2",
                "--output-format=json", job("tiny.fio", TINY).toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.err()).contains("warm-up 1/2 on ram:", "warm-up 2/2 on ram:");
        assertThat(cli.out()).containsOnlyOnce("\"jobname\"");
        assertThat(java.util.regex.Pattern.compile("\"app_bytes_written\"\\s*:\\s*262144\\b").matcher(cli.out()).find())
                .as("the measured run's own 256 KiB, not the warm-ups'").isTrue();
        assertThat(Cli.run("fsck", "--adapter=snapfs", image.toString()).status()).isZero();
        assertThat(bench("--warmup=-1", job("tiny2.fio", TINY).toString()).err())
                .contains("--warmup must be at least 0, got -1");
    }

    @Test
    void aFileDeviceIsLeftForFsck() throws IOException {
        Path image = dir.resolve("bench.img");

        Cli cli = Cli.run("bench", "--adapter=snapfs", "--progress=never", "--device=file:" + image,
                job("tiny.fio", TINY).toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.out()).contains("device=file:" + image);
        assertThat(Cli.run("fsck", "--adapter=snapfs", image.toString()).status()).isZero();
    }
}
