package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every command the hostile-user pass of issue 12 tried fails with one line on stderr and a
 * non-zero exit, no stack trace; --debug adds the stack.
 */
@Timeout(120)
class OneLineErrorsTest {
    private static final String JOB = "[tiny]\nrw=write\nbs=4k\nsize=64k\n";

    @TempDir
    Path dir;

    private static Cli bench(String... args) {
        List<String> full = new ArrayList<>(List.of("bench", "--adapter=snapfs", "--progress=never"));
        full.addAll(List.of(args));
        return Cli.run(full.toArray(String[]::new));
    }

    private static void assertOneLine(Cli run, String expected) {
        assertThat(run.status()).as(run.err()).isNotZero();
        assertThat(run.err()).startsWith("iomap: ").hasLineCount(1).contains(expected)
                .doesNotContain("Exception").doesNotContain("at dev.").doesNotContain("at java.");
    }

    private Path job(String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text);
    }

    @Test
    void mkfsPastWhatTheFormatAddressesIsRefusedBeforeAnythingIsWritten() {
        Path image = dir.resolve("big.img");
        assertOneLine(Cli.run("mkfs", "--size=2p", image.toString()), "iomap: xfs-like addresses at most "
                + "303060353024 blocks of 4096 bytes (1.1 PiB: 65536 allocation groups of at most 4624334 blocks,"
                + " what one group header's leaf bitmap covers); the device has 549755813888 blocks: use a smaller"
                + " size or larger blocks");
        assertThat(image).doesNotExist();
    }

    @Test
    void aKernelReadaheadWindowNotInWholeKibIsRefusedBeforeMounting() throws IOException {
        Path image = dir.resolve("ra.img");
        Cli mkfs = Cli.run("mkfs", "--size=16m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        Path mountPoint = Files.createDirectory(dir.resolve("mnt-ra"));
        assertOneLine(Cli.run("mount", "--read-ahead=1000", image.toString(), mountPoint.toString()),
                "iomap: --read-ahead must be 0 or a multiple of 1k up to 1g, got 1000");
        assertOneLine(Cli.run("mount", "--read-ahead=2g", image.toString(), mountPoint.toString()),
                "iomap: --read-ahead must be 0 or a multiple of 1k up to 1g, got 2g");
        assertOneLine(Cli.run("mount", "--read-ahead=lots", image.toString(), mountPoint.toString()),
                "iomap: --read-ahead: ");
    }

    @Test
    void benchOfDevZero() {
        assertOneLine(bench("/dev/zero"), "job file /dev/zero is not a regular file");
    }

    @Test
    void benchIncludingDevZero() throws IOException {
        assertOneLine(bench(job("inc.fio", "[global]\ninclude /dev/zero\n" + JOB).toString()),
                "included file /dev/zero is not a regular file");
    }

    @Test
    void benchWithBadBlockSizes() throws IOException {
        Path job = job("tiny.fio", JOB);
        for (String size : new String[] {"0", "256", "3000", "128k"}) {
            assertOneLine(bench("--block-size=" + size, job.toString()), "bad --block-size '" + size + "'");
        }
    }

    @Test
    void benchWithAJobNameOver255Characters() throws IOException {
        String name = "n".repeat(300);
        Cli run = bench(job("long.fio", "[" + name + "]\nrw=write\nbs=4k\nsize=64k\n").toString());
        assertOneLine(run, "file name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...' is over 255 bytes");
        assertThat(run.out()).as("refused before anything started").isEmpty();
    }

    @Test
    void benchWithAFilenameOf128TwoByteCharacters() throws IOException {
        // 128 chars but 256 bytes: the limit is in bytes
        Cli run = bench(job("long.fio", JOB + "filename=" + "\u00e9".repeat(128) + "\n").toString());
        assertOneLine(run, "file name '" + "\u00e9".repeat(40) + "...' is over 255 bytes");
        assertThat(run.out()).as("refused before anything started").isEmpty();
    }

    @Test
    void benchWithAFilenameOver255Characters() throws IOException {
        Cli run = bench(job("long.fio", JOB + "filename=" + "f".repeat(300) + "\n").toString());
        assertOneLine(run, "file name 'ffffffffffffffffffffffffffffffffffffffff...' is over 255 bytes");
        assertThat(run.out()).as("refused before anything started").isEmpty();
    }

    @Test
    void benchOfAPetabyteOnARamDevice() throws IOException {
        assertOneLine(bench(job("huge.fio", "[huge]\nrw=write\nbs=4k\nsize=1p\n").toString()),
                "larger than this machine's");
        assertOneLine(bench("--device=ram:1t", job("tiny.fio", JOB).toString()), "larger than this machine's");
    }

    @Test
    void aBinaryJobFile() throws IOException {
        Path binary = Files.write(dir.resolve("binary.fio"), new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1, (byte) 0xc3});
        assertOneLine(bench(binary.toString()), "is not text (not UTF-8)");
    }

    @Test
    void aDirectoryOrFifoGivenAsAnImage() throws Exception {
        Path directory = Files.createDirectory(dir.resolve("adir"));
        Path fifo = dir.resolve("afifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        try {
            assertThat(mkfifo.waitFor(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            mkfifo.destroyForcibly();
        }
        assertThat(mkfifo.exitValue()).isZero();
        Path mountPoint = Files.createDirectory(dir.resolve("mnt"));
        for (Path image : List.of(directory, fifo)) {
            String expected = image + " is not a regular file";
            assertOneLine(Cli.run("fsck", image.toString()), expected);
            assertOneLine(Cli.run("stat", image.toString()), expected);
            assertOneLine(Cli.run("mkfs", "--size=16m", image.toString()), expected);
            assertOneLine(Cli.run("mount", image.toString(), mountPoint.toString()), expected);
        }
    }

    @Test
    void aScrubOfAnAdapterWithoutDataChecksumsIsRefused() {
        Path image = dir.resolve("x.img");
        assertThat(Cli.run("mkfs", "--size=16m", image.toString()).status()).isZero();
        assertOneLine(Cli.run("fsck", "--scrub", image.toString()),
                "xfs-like keeps no data checksums: there is nothing to scrub");
        assertThat(Cli.run("fsck", image.toString()).status()).isZero();
    }

    @Test
    void debugAddsTheStackTrace() {
        Cli run = Cli.run("--debug", "mkfs", "--size=2p", dir.resolve("big.img").toString());
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err()).startsWith("iomap: xfs-like addresses at most").contains("\tat dev.iomap.");
    }
}
