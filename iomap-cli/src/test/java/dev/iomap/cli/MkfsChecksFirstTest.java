package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 12, data-loss case 4: mkfs checks everything before it changes the image, and refuses to
 * overwrite a filesystem unless --force; bench --device file: likewise.
 */
class MkfsChecksFirstTest {

    @TempDir
    Path dir;

    /** A 2 MiB image that is not a filesystem: every byte must survive a refused mkfs. */
    private Path existing() throws IOException {
        byte[] bytes = new byte[2 << 20];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        return Files.write(dir.resolve("existing.img"), bytes);
    }

    @ParameterizedTest
    @ValueSource(strings = {"--adapter=bogus --size=1m", "--size=16m --label=0123456789abcdef0123456789abcdef0",
            "--size=16m -o agcount=0", "--size=16m -o nosuchoption=1", "--size=8k", "--size=100",
            "--size=2p", "--size=16m --block-size=3000"})
    void aRefusedMkfsLeavesTheImageByteForByte(String options) throws IOException {
        Path image = existing();
        byte[] before = Files.readAllBytes(image);
        String[] args = (options + " " + image).split(" ");
        String[] full = new String[args.length + 1];
        full[0] = "mkfs";
        System.arraycopy(args, 0, full, 1, args.length);

        Cli mkfs = Cli.run(full);

        assertThat(mkfs.status()).as(mkfs.out()).isNotZero();
        assertThat(mkfs.err()).startsWith("iomap: ").hasLineCount(1).doesNotContain("Exception");
        assertThat(Files.size(image)).isEqualTo(before.length);
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
    }

    @Test
    void mkfsRefusesAnImageHoldingAFilesystemUnlessForced() throws IOException {
        for (String adapter : new String[] {"xfs-like", "snapfs"}) {
            Path image = dir.resolve(adapter + ".img");
            assertThat(Cli.run("mkfs", "--adapter=" + adapter, "--size=16m", image.toString()).status()).isZero();
            byte[] before = Files.readAllBytes(image);

            for (String other : new String[] {"xfs-like", "snapfs"}) {
                Cli again = Cli.run("mkfs", "--adapter=" + other, "--size=8m", image.toString());
                assertThat(again.status()).isEqualTo(1);
                assertThat(again.err()).isEqualTo("iomap: " + image + " already holds a " + adapter
                        + " filesystem: give --force to overwrite it\n");
                assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
            }

            Cli forced = Cli.run("mkfs", "--adapter=snapfs", "--force", "--size=8m", image.toString());
            assertThat(forced.status()).as(forced.err()).isZero();
            assertThat(Files.size(image)).isEqualTo(8L << 20);
            assertThat(Cli.run("fsck", "--adapter=snapfs", image.toString()).status()).isZero();
        }
    }

    @Test
    void mkfsFormatsAnImageThatHoldsNoFilesystem() throws IOException {
        Path image = existing();
        Cli mkfs = Cli.run("mkfs", "--size=16m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        assertThat(Cli.run("fsck", image.toString()).status()).isZero();
    }

    @Test
    void benchRefusesToReformatAnImageHoldingAFilesystemUnlessForced() throws IOException {
        Path image = dir.resolve("fs.img");
        assertThat(Cli.run("mkfs", "--adapter=snapfs", "--size=16m", image.toString()).status()).isZero();
        byte[] before = Files.readAllBytes(image);
        Path job = Files.writeString(dir.resolve("tiny.fio"), "[tiny]\nrw=write\nbs=4k\nsize=64k\n");

        Cli bench = Cli.run("bench", "--adapter=snapfs", "--progress=never", "--device=file:" + image, job.toString());

        assertThat(bench.status()).isEqualTo(1);
        assertThat(bench.err()).isEqualTo("iomap: " + image + " already holds a snapfs filesystem:"
                + " give --force to overwrite it\n");
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();

        Cli forced = Cli.run("bench", "--adapter=snapfs", "--progress=never", "--force", "--device=file:" + image,
                job.toString());
        assertThat(forced.status()).as(forced.err()).isZero();
    }

    @Test
    void aNewImageTheHostCannotHoldIsNotLeftBehind() throws IOException {
        long size = 17L << 40;
        Path probe = dir.resolve("probe");
        try (var file = new java.io.RandomAccessFile(probe.toFile(), "rw")) {
            file.setLength(size);
            org.junit.jupiter.api.Assumptions.abort("the host filesystem under " + dir
                    + " holds a 17 TiB file, so mkfs cannot be made to fail there after creating its image");
        } catch (IOException expected) {
            // ext4 (16 TiB at most): mkfs passes its own checks, then the host refuses the size
        } finally {
            Files.deleteIfExists(probe);
        }
        Path image = dir.resolve("huge.img");

        Cli mkfs = Cli.run("mkfs", "--size=17t", image.toString());

        assertThat(mkfs.status()).isNotZero();
        assertThat(mkfs.err()).startsWith("iomap: ").hasLineCount(1);
        assertThat(image).doesNotExist();
    }
}
