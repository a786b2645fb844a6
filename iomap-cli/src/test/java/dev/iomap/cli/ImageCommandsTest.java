package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImageCommandsTest {

    @TempDir
    Path dir;

    @Test
    void mkfsThenFsckThenStat() throws IOException {
        Path image = dir.resolve("fs.img");

        Cli mkfs = Cli.run("mkfs", "--adapter=snapfs", "--block-size=4096", "--size=8m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        assertThat(Files.size(image)).isEqualTo(8L << 20);
        assertThat(mkfs.out()).contains(image + ": snapfs filesystem, 8388608 bytes, block size 4096, 1791 blocks");

        Cli fsck = Cli.run("fsck", "--adapter=snapfs", image.toString());
        assertThat(fsck.status()).isZero();
        assertThat(fsck.out()).isEqualTo(image + ": clean (snapfs, 4096-byte blocks; checked 1 inodes, 0 blocks, commit 2)\n");

        Cli stat = Cli.run("stat", "--adapter=snapfs", image.toString());
        assertThat(stat.status()).as(stat.err()).isZero();
        assertThat(stat.out())
                .contains("adapter      : snapfs")
                .contains("block size   : 4096")
                .contains("blocks       : 1791 total, 1791 free, 0 used")   // superblock and two 512 KiB slots not counted
                .contains("inodes       : unbounded total")
                .contains("page cache   : page size 4096")
                .contains("cache stats  : since mount: app written 0B")
                .contains("device stats : read ");
    }

    @Test
    void mkfsPreallocateLeavesNoHoleInTheImageAndAFilesystemThatChecksClean() throws Exception {
        Path sparse = dir.resolve("sparse.img");
        Path full = dir.resolve("full.img");
        Path zoned = dir.resolve("zoned.img");
        assertThat(Cli.run("mkfs", "--size=16m", sparse.toString()).status()).isZero();
        Cli mkfs = Cli.run("mkfs", "--size=16m", "--preallocate", full.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        Cli mkfsZoned = Cli.run("mkfs", "--adapter=zonefs-like", "--size=8m", "--preallocate", "-o",
                "zone-size=1m,conventional=2,capacity=768k,max-open=2", zoned.toString());
        assertThat(mkfsZoned.status()).as(mkfsZoned.err()).isZero();

        assertThat(allocatedBytes(sparse)).as("without --preallocate the image stays sparse").isLessThan(16L << 20);
        assertThat(allocatedBytes(full)).isGreaterThanOrEqualTo(16L << 20);
        assertThat(allocatedBytes(zoned)).isGreaterThanOrEqualTo(Files.size(zoned));
        for (Path image : new Path[] {full, zoned}) {
            Cli fsck = Cli.run("fsck", image.toString());
            assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
            assertThat(fsck.out()).contains(": clean (");
        }
    }

    /** Bytes the host filesystem has allocated to {@code file} ({@code stat -c '%b %B'}). */
    private static long allocatedBytes(Path file) throws IOException, InterruptedException {
        Process stat = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).start();
        String[] fields = new String(stat.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                .strip().split(" ");
        assertThat(stat.waitFor()).isZero();
        return Long.parseLong(fields[0]) * Long.parseLong(fields[1]);
    }

    @Test
    void fsckListsProblemsAndExitsWithOne() throws IOException {
        Path image = dir.resolve("broken.img");
        assertThat(Cli.run("mkfs", "--adapter=snapfs", "--size=1m", image.toString()).status()).isZero();
        try (var file = new RandomAccessFile(image.toFile(), "rw")) {
            file.write("garbage!".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        }

        Cli fsck = Cli.run("fsck", "--adapter=snapfs", image.toString());

        assertThat(fsck.status()).isEqualTo(1);
        assertThat(fsck.out()).startsWith(image + ": 1 problem (snapfs; checked the superblock only):\n")
                .contains("  snapfs: no superblock magic at device offset 0");
        Cli stat = Cli.run("stat", "--adapter=snapfs", image.toString());
        assertThat(stat.status()).isEqualTo(1);
        assertThat(stat.err()).contains("iomap: snapfs: no superblock magic at device offset 0");
    }

    @Test
    void userErrorsOfTheImageCommands() {
        Path missing = dir.resolve("missing.img");

        assertThat(Cli.run("fsck", "--adapter=snapfs", missing.toString()).err())
                .isEqualTo("iomap: no such file: " + missing + "\n");
        assertThat(Cli.run("mkfs", "--adapter=snapfs", missing.toString()).err()).contains("give --size");
        assertThat(Cli.run("mkfs", "--adapter=snapfs", "--size=1m", "--block-size=3000", missing.toString()).err())
                .contains("bad --block-size '3000'");
        assertThat(Cli.run("mkfs").status()).as("picocli usage error").isEqualTo(2);
    }
}
