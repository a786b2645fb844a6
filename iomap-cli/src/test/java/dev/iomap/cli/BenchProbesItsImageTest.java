package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code iomap bench --device file:PATH} on an image that holds a filesystem reads the adapter and the
 * block size from its superblock, as fsck, stat and mount do: {@code --adapter} and
 * {@code --block-size} are optional, one that disagrees with the image is refused in one line before
 * anything is written. Images are sparse, in a temporary directory deleted afterwards.
 */
@Timeout(600)
class BenchProbesItsImageTest {
    private static final String JOB = "[tiny]\nrw=write\nbs=4k\nsize=64k\n";

    @TempDir
    Path dir;

    @Test
    void benchFormatsAnImageAgainWithItsOwnAdapterAndBlockSizeForEveryOne() throws IOException {
        Path job = Files.writeString(dir.resolve("tiny.fio"), JOB);
        for (String adapter : List.of("xfs-like", "snapfs")) {
            for (String blockSize : ImagesDescribeThemselvesTest.BLOCK_SIZES) {
                long bytes = Units.parseSize(blockSize, 1024);
                Path image = mkfs(adapter, blockSize);

                Cli bench = Cli.run("bench", "--progress=never", "--force", "--device=file:" + image, job.toString());

                assertThat(bench.status()).as(adapter + " " + blockSize + ": " + bench.err()).isZero();
                assertThat(bench.out()).contains(": adapter " + adapter + ", block size " + bytes + ", page size ");
                Cli fsck = Cli.run("fsck", image.toString());
                assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
                assertThat(fsck.out()).startsWith(image + ": clean (" + adapter + ", " + bytes + "-byte blocks; checked ")
                        .hasLineCount(1);
                Files.delete(image);
            }
        }
    }

    @Test
    void anOptionThatDisagreesWithTheImageIsRefusedInOneLineAndNothingIsWritten() throws IOException {
        Path job = Files.writeString(dir.resolve("tiny.fio"), JOB);
        Path image = mkfs("snapfs", "1k");
        byte[] before = Files.readAllBytes(image);

        Cli blockSize = Cli.run("bench", "--progress=never", "--force", "--block-size=4k", "--device=file:" + image,
                job.toString());
        Cli adapter = Cli.run("bench", "--progress=never", "--force", "--adapter=xfs-like", "--device=file:" + image,
                job.toString());

        assertThat(blockSize.status()).isEqualTo(1);
        assertThat(blockSize.err()).isEqualTo("iomap: " + image + " holds a snapfs filesystem with 1024-byte blocks,"
                + " not 4096 (--block-size)\n");
        assertThat(adapter.status()).isEqualTo(1);
        assertThat(adapter.err()).isEqualTo("iomap: " + image + " holds a snapfs filesystem, not xfs-like (--adapter)\n");
        assertThat(blockSize.out() + adapter.out()).isEmpty();
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();

        Cli agreeing = Cli.run("bench", "--progress=never", "--force", "--adapter=snapfs", "--block-size=1024",
                "--device=file:" + image, job.toString());
        assertThat(agreeing.status()).as(agreeing.err()).isZero();
    }

    @Test
    void withoutForceAnImageHoldingAFilesystemIsStillRefusedFirst() throws IOException {
        Path job = Files.writeString(dir.resolve("tiny.fio"), JOB);
        Path image = mkfs("xfs-like", "2k");

        Cli bench = Cli.run("bench", "--progress=never", "--block-size=4k", "--device=file:" + image, job.toString());

        assertThat(bench.status()).isEqualTo(1);
        assertThat(bench.err()).isEqualTo("iomap: " + image + " already holds a xfs-like filesystem: give --force to"
                + " overwrite it\n");
    }

    private Path mkfs(String adapter, String blockSize) throws IOException {
        Path image = dir.resolve(adapter + "-" + blockSize + ".img");
        Cli mkfs = Cli.run("mkfs", "--adapter=" + adapter, "--block-size=" + blockSize, "--size=32m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        return image;
    }
}
