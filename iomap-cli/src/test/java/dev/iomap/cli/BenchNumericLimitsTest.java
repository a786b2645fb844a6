package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 36, item 13: a job-file number too large for what bench does with it is refused before the run,
 * in one line naming the option, its line and its limit, never as an arithmetic error ("long overflow")
 * from the run.
 */
class BenchNumericLimitsTest {
    @TempDir
    Path dir;

    private Cli bench(String... lines) throws IOException {
        Path job = Files.writeString(dir.resolve("job.fio"), String.join("\n", lines) + "\n");
        return Cli.run("bench", "--progress=never", "--device=ram:64m", job.toString());
    }

    private String at(int line) {
        return dir.resolve("job.fio") + ":" + line;
    }

    @Test
    void aRampTimeOverTheLimitIsRefusedNamingIt() throws IOException {
        Cli cli = bench("[j]", "rw=write", "bs=4k", "size=64k", "ramp_time=99999999999999999");

        assertThat(cli.status()).isEqualTo(1);
        assertThat(cli.err()).isEqualTo("iomap: bad time '99999999999999999' for ramp_time at " + at(5)
                + ": more than ramp_time's limit of 36500d (100 years)\n");
    }

    @Test
    void aRuntimeOverTheLimitIsRefusedNamingIt() throws IOException {
        Cli cli = bench("[j]", "rw=write", "bs=4k", "size=64k", "runtime=99999999999999999", "time_based=1");

        assertThat(cli.status()).isEqualTo(1);
        assertThat(cli.err()).isEqualTo("iomap: bad time '99999999999999999' for runtime at " + at(5)
                + ": more than runtime's limit of 36500d (100 years)\n");
    }

    @Test
    void theLimitItselfIsAccepted() throws IOException {
        Cli cli = bench("[j]", "rw=write", "bs=4k", "size=64k", "ramp_time=36500d", "runtime=36500d");

        assertThat(cli.status()).as(cli.err()).isZero();
    }

    @Test
    void filesWhoseSizesAddUpPastALongAreRefused() throws IOException {
        Cli files = bench("[j]", "rw=write", "bs=4k", "nrfiles=2", "filesize=5000000000000000000");

        assertThat(files.status()).isEqualTo(1);
        assertThat(files.err()).isEqualTo("iomap: filesize 5000000000000000000 at " + at(5)
                + " times 2 files is more than 9223372036854775807 bytes (8 EiB)\n");

        Cli jobs = bench("[j]", "rw=write", "bs=4k", "numjobs=4096", "filesize=4p");

        assertThat(jobs.status()).isEqualTo(1);
        assertThat(jobs.err()).isEqualTo("iomap: the jobs' files add up to more than 9223372036854775807 bytes"
                + " (8 EiB): lower size/filesize, nrfiles or numjobs\n");
    }
}
