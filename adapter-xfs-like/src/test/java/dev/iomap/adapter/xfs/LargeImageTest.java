package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sparse image file of 16 TiB less one block (the largest file ext4 holds with 4 KiB blocks), formatted,
 * used and checked end to end: mkfs writes each group's header and first leaf and nothing else, and the
 * image stays sparse through mounts, writes, a clone and fsck. The image is deleted with the directory.
 */
class LargeImageTest {
    private static final int BLOCK = 4096;
    private static final long BYTES = (16L << 40) - BLOCK;
    private static final long TIB = 1L << 40;

    @TempDir
    Path dir;

    /** @return the bytes the host filesystem allocated to the file ({@code stat -c %b}, 512-byte units) */
    private static long allocatedBytes(Path file) throws IOException, InterruptedException {
        Process stat = new ProcessBuilder("stat", "-c", "%b", file.toString()).redirectErrorStream(true).start();
        String out = new String(stat.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip();
        assertThat(stat.waitFor()).as(out).isZero();
        return Long.parseLong(out) * 512;
    }

    @Test
    void aSixteenTebibyteImageFormatsMountsAndChecksWithoutFillingTheDisk() throws Exception {
        Path image = dir.resolve("large.img");
        byte[] small = pattern(1, 0, 1000);
        byte[] big = pattern(2, 0, (1 << 20) + 13);
        byte[] far = pattern(3, 3 * TIB, 5000);
        try (FileBlockDevice device = FileBlockDevice.open(image, BLOCK, BYTES, false)) {
            IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(BLOCK));
            XfsGeometry geometry = Images.geometry(device);
            assertThat(geometry.agCount()).isEqualTo(929);
            // The superblock, the journal's, inode table block 0, and per group its header and first leaf.
            assertThat(device.stats().bytesWritten()).isEqualTo((3 + 2 * 929) * BLOCK);
            assertThat(device.stats().writes()).isEqualTo(3 + 929);

            try (IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                FsStat stat = fs.statfs();
                assertThat(stat.totalBlocks()).isEqualTo(BYTES / BLOCK);
                assertThat(stat.totalInodes()).isEqualTo(geometry.inodeCount() - 1);
                fs.mkdir("/d");
                fs.create("/d/small").close();
                try (IomapFile file = fs.open("/d/small")) {
                    XfsFixture.writeAt(file, 0, small);
                }
                try (IomapFile file = fs.create("/big")) {
                    XfsFixture.writeAt(file, 0, big);
                    file.fsync();
                }
                try (IomapFile file = fs.create("/far")) {
                    XfsFixture.writeAt(file, 3 * TIB, far);
                }
                try (IomapFile source = fs.open("/big"); IomapFile clone = fs.create("/clone")) {
                    clone.cloneRange(source, 0, 0, big.length);
                }
            }
            FsckReport report = IomapFileSystems.fsck("xfs-like", device);
            assertThat(report.problems()).isEmpty();
            assertThat(report.checked()).isEqualTo("6 inodes, 6 extents, 4294967295 blocks in 929 allocation groups");
            assertThat(Images.refcounts(device)).hasSize(1);

            try (IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                assertThat(XfsFixture.readFile(fs, "/d/small")).isEqualTo(small);
                assertThat(XfsFixture.readFile(fs, "/big")).isEqualTo(big);
                assertThat(XfsFixture.readFile(fs, "/clone")).isEqualTo(big);
                try (IomapFile file = fs.open("/far")) {
                    assertThat(file.size()).isEqualTo(3 * TIB + far.length);
                    assertThat(XfsFixture.read(file, 3 * TIB, far.length)).isEqualTo(far);
                    assertThat(XfsFixture.read(file, 3 * TIB - BLOCK, BLOCK)).containsOnly(0);
                }
            }
            XfsFixture.assertClean(device);
        }
        assertThat(Files.size(image)).isEqualTo(BYTES);
        // 7.3 MiB of group headers and first leaves, 1.1 MiB of data, the rest journal, leaves and inodes.
        assertThat(allocatedBytes(image)).isLessThan(10L << 20);
    }
}
