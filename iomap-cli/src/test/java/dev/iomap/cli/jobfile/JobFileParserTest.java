package dev.iomap.cli.jobfile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobFileParserTest {
    private static final Path EXAMPLES = Path.of("..", "examples");
    private static final long MIB = 1L << 20;

    @TempDir
    Path dir;

    private final JobFileParser parser = new JobFileParser(Map.of("SIZE", "8m", "EMPTY", ""));

    private Path file(String name, String... lines) throws IOException {
        return Files.writeString(dir.resolve(name), String.join("\n", lines) + "\n");
    }

    private BenchPlan plan(Path... files) throws Exception {
        List<JobFile> parsed = new ArrayList<>();
        for (Path file : files) {
            parsed.add(parser.parse(file));
        }
        return new JobResolver().resolve(parsed);
    }

    private JobSpec onlyJob(Path file) throws Exception {
        BenchPlan plan = plan(file);
        assertThat(plan.jobs()).hasSize(1);
        return plan.jobs().getFirst();
    }

    @Test
    void theSeedsRandomWriteJobAsPublished() throws Exception {
        BenchPlan plan = plan(Path.of("src/test/resources/jobs/test_randwrite.fio"));

        JobSpec job = plan.jobs().getFirst();
        assertThat(job.name()).isEqualTo("fio-run");
        assertThat(job.io().rw()).isEqualTo(ReadWrite.RANDWRITE);
        assertThat(job.io().writeBlockSize()).isEqualTo(4096);
        assertThat(job.files().fileSize()).isEqualTo(1L << 30);
        assertThat(job.files().directories()).containsExactly("/");
        assertThat(job.files().overwrite()).isTrue();
        assertThat(job.files().preRead()).isTrue();
        assertThat(job.files().invalidate()).as("pre_read clears invalidate, as in fio").isFalse();
        assertThat(job.numjobs()).isEqualTo(8);
        assertThat(job.sync().fdatasyncEvery()).isEqualTo(1);
        assertThat(job.timing().runtime()).isEqualTo(Duration.ofSeconds(60));
        assertThat(job.timing().timeBased()).isFalse();
        assertThat(job.groupReporting()).isTrue();
        assertThat(job.directIo()).isEmpty();
        assertThat(job.iodepth()).isEqualTo(64);
        assertThat(plan.notes()).containsExactly("fio-run: note: both iodepth >= 1 and synchronous I/O engine"
                + " are selected, queue depth will be capped at 1");
        assertThat(plan.globalOptions()).containsEntry("rw", "randwrite").containsEntry("dir", "./");
    }

    @Test
    void theThreeExampleWorkloads() throws Exception {
        JobSpec randwrite = onlyJob(EXAMPLES.resolve("seed-randwrite-4k.fio"));
        assertThat(randwrite.io().rw()).isEqualTo(ReadWrite.RANDWRITE);
        assertThat(randwrite.files().fileSize()).isEqualTo(16 * MIB);
        assertThat(randwrite.numjobs()).isEqualTo(8);
        assertThat(randwrite.files().paths("fio-run", 7)).containsExactly("/fio-run.7.0");

        JobSpec overwrite = onlyJob(EXAMPLES.resolve("seed-overwrite-1k.fio"));
        assertThat(overwrite.name()).isEqualTo("fstime-w");
        assertThat(overwrite.io().rw()).isEqualTo(ReadWrite.WRITE);
        assertThat(overwrite.io().writeBlockSize()).isEqualTo(1024);
        assertThat(overwrite.files().fileSize()).isEqualTo(2000 * 1024);
        assertThat(overwrite.timing().timeBased()).isTrue();
        assertThat(overwrite.timing().runtime()).isEqualTo(Duration.ofSeconds(10));

        JobSpec seqwrite = onlyJob(EXAMPLES.resolve("seed-seqwrite-128k.fio"));
        assertThat(seqwrite.io().writeBlockSize()).isEqualTo(128 * 1024);
        assertThat(seqwrite.files().fileSize()).isEqualTo(512 * MIB);
        assertThat(seqwrite.sync().endFsync()).isTrue();
        assertThat(seqwrite.timing().loops()).isEqualTo(1);
    }

    @Test
    void aJobSeesOnlyTheGlobalSectionsAboveItAndOverridesThem() throws Exception {
        BenchPlan plan = plan(file("inherit.fio",
                "[global]",
                "rw=write",
                "bs=8k",
                "size=1m",
                "[first]",
                "bs=16k",
                "[global]",
                "rw=randread",
                "[second]",
                "[third]",
                "rw=read",
                "numjobs=3"));

        assertThat(plan.jobs()).extracting(JobSpec::name).containsExactly("first", "second", "third");
        JobSpec first = plan.jobs().get(0);
        assertThat(first.io().rw()).isEqualTo(ReadWrite.WRITE);
        assertThat(first.io().writeBlockSize()).isEqualTo(16 * 1024);
        JobSpec second = plan.jobs().get(1);
        assertThat(second.io().rw()).isEqualTo(ReadWrite.RANDREAD);
        assertThat(second.io().readBlockSize()).isEqualTo(8 * 1024);
        assertThat(plan.jobs().get(2).io().rw()).isEqualTo(ReadWrite.READ);
        assertThat(plan.jobs().get(2).numjobs()).isEqualTo(3);
        assertThat(plan.jobs()).allSatisfy(job -> assertThat(job.groupId()).isZero());
        assertThat(first.options()).containsExactly(Map.entry("bs", "16k"));
    }

    @Test
    void eachFileAndEachStonewallStartsAGroup() throws Exception {
        Path a = file("a.fio", "[a1]", "size=64k", "[a2]", "size=64k", "stonewall");
        Path b = file("b.fio", "[b1]", "size=64k", "wait_for_previous");

        BenchPlan plan = plan(a, b);

        assertThat(plan.jobs()).extracting(JobSpec::groupId).containsExactly(0, 1, 2);
        assertThat(plan.groups()).hasSize(3);
    }

    @Test
    void includesAreReadWhereTheyStandRelativeToTheIncludingFile() throws Exception {
        Files.createDirectories(dir.resolve("common"));
        file("common/base.fio", "; shared settings", "rw=randwrite", "include sync.fio");
        file("common/sync.fio", "fdatasync=4");
        Path job = file("job.fio",
                "[global]",
                "include common/base.fio",
                "size=1m",
                "[job]",
                "bs=2k");

        JobSpec spec = onlyJob(job);

        assertThat(spec.io().rw()).isEqualTo(ReadWrite.RANDWRITE);
        assertThat(spec.sync().fdatasyncEvery()).isEqualTo(4);
        assertThat(spec.io().writeBlockSize()).isEqualTo(2048);
    }

    @Test
    void anIncludedFileMayNotHoldSections() throws Exception {
        file("bad-include.fio", "rw=write", "[job]");
        Path job = file("job.fio", "[global]", "include bad-include.fio", "[job]", "size=1m");

        assertThatThrownBy(() -> plan(job))
                .isInstanceOf(JobFileException.class)
                .hasMessageContaining("bad-include.fio:2")
                .hasMessageContaining("options only");
    }

    @Test
    void circularAndMissingIncludesAreErrors() throws Exception {
        file("loop.fio", "include loop.fio");
        Path circular = file("circular.fio", "[job]", "include loop.fio");
        Path missing = file("missing.fio", "[job]", "include nowhere.fio");

        assertThatThrownBy(() -> plan(circular)).hasMessageContaining("circular");
        assertThatThrownBy(() -> plan(missing)).hasMessageContaining("nowhere.fio does not exist");
    }

    @Test
    void commentsBlankLinesAndSpacesAroundTheEqualsSign() throws Exception {
        JobSpec job = onlyJob(file("comments.fio",
                "; a comment",
                "# another",
                "",
                "[job]   ; trailing comment",
                "   rw = randwrite   # fio drops everything after '#'",
                "\tbs=4k;and after ';'",
                "size = 1m",
                "time_based",
                "runtime=2"));

        assertThat(job.io().rw()).isEqualTo(ReadWrite.RANDWRITE);
        assertThat(job.io().writeBlockSize()).isEqualTo(4096);
        assertThat(job.files().fileSize()).isEqualTo(MIB);
        assertThat(job.timing().timeBased()).as("a bare flag means 1").isTrue();
    }

    @Test
    void sizeSuffixesFollowFiosDefaultKbBase() throws Exception {
        assertThat(onlyJob(file("s1.fio", "[j]", "size=4k")).files().fileSize()).isEqualTo(4096);
        assertThat(onlyJob(file("s2.fio", "[j]", "size=3M")).files().fileSize()).isEqualTo(3 * MIB);
        assertThat(onlyJob(file("s3.fio", "[j]", "size=1g")).files().fileSize()).isEqualTo(1L << 30);
        assertThat(onlyJob(file("s4.fio", "[j]", "size=2000kb")).files().fileSize()).isEqualTo(2000 * 1024);
        assertThat(onlyJob(file("s5.fio", "[j]", "size=1mi")).files().fileSize()).as("fio: 1mi is 1 MB").isEqualTo(1_000_000);
        assertThat(onlyJob(file("s6.fio", "[j]", "size=0x10000")).files().fileSize()).isEqualTo(65536);
        assertThat(onlyJob(file("s7.fio", "[j]", "kb_base=1000", "size=1m")).files().fileSize()).isEqualTo(1_000_000);
        assertThat(onlyJob(file("s8.fio", "[j]", "kb_base=1000", "size=1MiB")).files().fileSize()).isEqualTo(MIB);
        assertThat(onlyJob(file("s9.fio", "[j]", "size=${SIZE}")).files().fileSize()).isEqualTo(8 * MIB);
    }

    @Test
    void timeUnitsDefaultToSeconds() throws Exception {
        assertThat(runtime("60")).isEqualTo(Duration.ofSeconds(60));
        assertThat(runtime("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(runtime("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(runtime("1d")).isEqualTo(Duration.ofDays(1));
        assertThat(runtime("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(runtime("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(runtime("250msec")).isEqualTo(Duration.ofMillis(250));
        assertThat(runtime("100us")).isEqualTo(Duration.ofNanos(100_000));
        assertThat(onlyJob(file("ramp.fio", "[j]", "size=1m", "ramp_time=2s")).timing().rampTime())
                .isEqualTo(Duration.ofSeconds(2));
    }

    private Duration runtime(String value) throws Exception {
        return onlyJob(file("t.fio", "[j]", "size=1m", "runtime=" + value)).timing().runtime();
    }

    @Test
    void anUnknownOptionIsAnErrorNamingItAndItsLine() throws Exception {
        Path job = file("job.fio", "[global]", "rw=write", "size=1m", "", "frobnicate=3", "[job]");

        assertThatThrownBy(() -> plan(job))
                .isInstanceOf(JobFileException.class)
                .hasMessage("unknown option 'frobnicate' at " + job + ":5");
    }

    @Test
    void aFioOptionWithoutSupportIsNamedAsSuch() throws Exception {
        Path job = file("job.fio", "[job]", "size=1m", "verify=md5");

        assertThatThrownBy(() -> plan(job))
                .hasMessage("option 'verify' at " + job + ":3 is a fio option that iomap bench does not support");
    }

    @Test
    void aBadSizeNamesTheValueAndTheLine() throws Exception {
        Path job = file("job.fio", "[job]", "rw=write", "size=12q");

        assertThatThrownBy(() -> plan(job))
                .isInstanceOf(JobFileException.class)
                .hasMessageStartingWith("bad size '12q' for size at " + job + ":3: ")
                .hasMessageContaining("unknown unit 'q'");
        assertThatThrownBy(() -> plan(file("bs.fio", "[job]", "size=1m", "bs=big")))
                .hasMessageContaining("bad block size 'big' for bs at")
                .hasMessageContaining("bs.fio:3");
        assertThatThrownBy(() -> plan(file("pct.fio", "[job]", "size=20%")))
                .hasMessageContaining("bad size '20%'");
    }

    @Test
    void otherBadValuesNameTheirLine() throws Exception {
        assertThatThrownBy(() -> plan(file("rw.fio", "[job]", "size=1m", "rw=trim")))
                .hasMessageContaining("rw=trim at " + dir.resolve("rw.fio") + ":3 is not supported");
        assertThatThrownBy(() -> plan(file("time.fio", "[job]", "size=1m", "runtime=5y")))
                .hasMessageContaining("bad time '5y' for runtime at");
        assertThatThrownBy(() -> plan(file("bool.fio", "[job]", "size=1m", "overwrite=maybe")))
                .hasMessageContaining("bad value 'maybe' for overwrite at");
        assertThatThrownBy(() -> plan(file("mix.fio", "[job]", "size=1m", "rwmixread=101")))
                .hasMessageContaining("out of range 0..100");
        assertThatThrownBy(() -> plan(file("dotdot.fio", "[job]", "size=1m", "directory=../up")))
                .hasMessageContaining("'..'");
    }

    @Test
    void jobsThatCannotRunAreRefusedWithTheirLine() throws Exception {
        Path noSize = file("nosize.fio", "[job]", "rw=write");
        assertThatThrownBy(() -> plan(noSize)).hasMessageContaining("job 'job' at " + noSize + ":1 needs size=");
        assertThatThrownBy(() -> plan(file("small.fio", "[job]", "size=2k", "bs=4k")))
                .hasMessageContaining("smaller than the block size 4096");
        assertThatThrownBy(() -> plan(file("tb.fio", "[job]", "size=1m", "time_based=1")))
                .hasMessageContaining("time_based but has no runtime");
        assertThatThrownBy(() -> plan(file("outside.fio", "size=1m", "[job]")))
                .hasMessageContaining("outside of any section");
        assertThatThrownBy(() -> plan(file("empty.fio", "[global]", "size=1m")))
                .hasMessageContaining("defines no job");
    }

    @Test
    void anUnknownEngineIsNotedAndReplacedByPsync() throws Exception {
        BenchPlan plan = plan(file("engine.fio", "[job]", "size=1m", "ioengine=mmap", "iodepth=16"));

        assertThat(plan.notes()).containsExactly(
                "job: ioengine=mmap is not supported, using psync",
                "job: note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1");
        assertThat(plan.jobs().getFirst().ioengine()).isEqualTo("mmap");
        assertThat(plan.jobs().getFirst().queueDepth()).isEqualTo(1);
    }

    @Test
    void anAsynchronousEngineKeepsItsDepth() throws Exception {
        for (String engine : List.of("libaio", "io_uring", "posixaio")) {
            BenchPlan plan = plan(file(engine + ".fio", "[job]", "size=1m", "ioengine=" + engine, "iodepth=16"));

            assertThat(plan.notes()).as(engine).isEmpty();
            assertThat(plan.jobs().getFirst().queueDepth()).as(engine).isEqualTo(16);
        }
        assertThat(plan(file("shallow.fio", "[job]", "size=1m", "ioengine=libaio")).jobs().getFirst().queueDepth())
                .as("fio's default iodepth").isEqualTo(1);
    }

    @Test
    void directIoIsRememberedWithItsLineForTheRunnerToRefuse() throws Exception {
        Path job = file("direct.fio", "[job]", "size=1m", "direct=1");

        assertThat(onlyJob(job).directIo()).contains(new Location(job, 3));
        assertThat(onlyJob(file("buffered.fio", "[job]", "size=1m", "buffered=0")).directIo()).isPresent();
    }

    @Test
    void uncachedIsTakenAsFioNamesIt() throws Exception {
        assertThat(onlyJob(file("uncached.fio", "[job]", "size=1m", "uncached=1")).uncached()).isTrue();
        assertThat(onlyJob(file("cached.fio", "[job]", "size=1m")).uncached()).isFalse();
    }

    @Test
    void atomicWritesAreRememberedWithTheirLineAndNeedDirectIo() throws Exception {
        Path job = file("atomic.fio", "[job]", "size=1m", "direct=1", "atomic=1");
        assertThat(onlyJob(job).atomic()).contains(new Location(job, 4));
        assertThat(onlyJob(file("plain.fio", "[job]", "size=1m", "direct=1", "atomic=0")).atomic()).isEmpty();

        Path buffered = file("buffered-atomic.fio", "[job]", "size=1m", "atomic=1");
        assertThatThrownBy(() -> plan(buffered)).isInstanceOf(JobFileException.class)
                .hasMessage("atomic=1 at " + new Location(buffered, 3) + " needs direct=1: atomic writes (RWF_ATOMIC)"
                        + " are direct I/O only");
    }

    @Test
    void fileNamesDirectoriesAndFileCounts() throws Exception {
        JobSpec generated = onlyJob(file("gen.fio", "[gen]", "size=1m", "nrfiles=2", "directory=./data:/other"));
        assertThat(generated.files().fileSize()).isEqualTo(512 * 1024);
        assertThat(generated.files().paths("gen", 0)).containsExactly("/data/gen.0.0", "/data/gen.0.1");
        assertThat(generated.files().paths("gen", 1)).containsExactly("/other/gen.1.0", "/other/gen.1.1");

        JobSpec named = onlyJob(file("named.fio", "[named]", "size=1m", "filename=a:b\\:c", "dir=/d"));
        assertThat(named.sharedFiles()).isTrue();
        assertThat(named.files().paths("named", 3)).containsExactly("/d/a", "/d/b:c");

        JobSpec fileSize = onlyJob(file("fs.fio", "[fs]", "filesize=64k", "nrfiles=4"));
        assertThat(fileSize.files().fileSize()).isEqualTo(65536);
        assertThat(fileSize.files().ioSize()).isEqualTo(4 * 65536);
    }
}
