package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.NotSupportedException;
import dev.iomap.cli.bench.DeviceSpec;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 19: image files are opened with {@code O_DIRECT} unless {@code cache=host} asks for the host's
 * page cache, and where the host refuses {@code O_DIRECT} the commands fall back to buffered I/O and say
 * so in one line.
 */
class ImageCacheTest {
    private static final String JOB = String.join("\n",
            "[global]", "ioengine=psync", "rw=write", "bs=4k", "size=64k", "[w]", "");

    @TempDir
    Path dir;

    @Test
    void deviceSpecsParseTheCacheMode() throws UsageException {
        assertThat(DeviceSpec.parse("file:/tmp/a.img"))
                .isEqualTo(new DeviceSpec.ImageFile(Path.of("/tmp/a.img"), ImageCache.NONE));
        assertThat(DeviceSpec.parse("file:/tmp/a,b.img,cache=host"))
                .isEqualTo(new DeviceSpec.ImageFile(Path.of("/tmp/a,b.img"), ImageCache.HOST));
        assertThat(DeviceSpec.parse("file:/tmp/a.img,cache=NONE"))
                .isEqualTo(new DeviceSpec.ImageFile(Path.of("/tmp/a.img"), ImageCache.NONE));
        assertThatThrownBy(() -> DeviceSpec.parse("file:/tmp/a.img,cache=writeback"))
                .isInstanceOf(UsageException.class)
                .hasMessage("bad cache mode 'writeback': use none (O_DIRECT, the default) or host (through the"
                        + " host's page cache)");
        assertThatThrownBy(() -> DeviceSpec.parse("file:,cache=host"))
                .isInstanceOf(UsageException.class)
                .hasMessageStartingWith("bad --device 'file:,cache=host'");
    }

    @Test
    void deviceSpecsTakeASizeAndRefuseUnknownOptions() throws UsageException {
        assertThat(DeviceSpec.parse("file:/tmp/a.img,size=1g"))
                .isEqualTo(new DeviceSpec.ImageFile(Path.of("/tmp/a.img"), ImageCache.NONE, 1L << 30, false));
        assertThat(DeviceSpec.parse("file:/tmp/a,b.img,size=64m,cache=host"))
                .isEqualTo(new DeviceSpec.ImageFile(Path.of("/tmp/a,b.img"), ImageCache.HOST, 64L << 20, false));
        assertThat(DeviceSpec.parse("file:/tmp/a.img,cache=host,size=64m"))
                .isEqualTo(new DeviceSpec.ImageFile(Path.of("/tmp/a.img"), ImageCache.HOST, 64L << 20, false));
        assertThat(DeviceSpec.parse("file:/tmp/a.img,size=10000").capacityFor(1L << 20, 4096))
                .as("rounded up to whole blocks, whatever the files need").isEqualTo(12288);
        assertThat(DeviceSpec.parse("file:/tmp/a.img").capacityFor(1L << 20, 4096))
                .as("automatic: twice the files plus 64 MiB").isEqualTo(66L << 20);
        assertThatThrownBy(() -> DeviceSpec.parse("file:/tmp/a.img,sise=1g"))
                .isInstanceOf(UsageException.class)
                .hasMessage("bad --device 'file:/tmp/a.img,sise=1g': no option sise= for an image file"
                        + " (have cache=, size= and prealloc=)");
        assertThatThrownBy(() -> DeviceSpec.parse("file:/tmp/a.img,size=1g,size=2g"))
                .isInstanceOf(UsageException.class)
                .hasMessage("bad --device 'file:/tmp/a.img,size=1g,size=2g': size= given twice");
        assertThatThrownBy(() -> DeviceSpec.parse("file:/tmp/a.img,size=-5"))
                .isInstanceOf(UsageException.class)
                .hasMessageStartingWith("bad device size in 'file:/tmp/a.img,size=-5'");
    }

    @Test
    void preallocFullWritesZeroesOverTheWholeImageBeforeItIsFormatted() throws Exception {
        assertThat(DeviceSpec.parse("file:/tmp/a.img,prealloc=full,size=64m"))
                .isEqualTo(new DeviceSpec.ImageFile(Path.of("/tmp/a.img"), ImageCache.NONE, 64L << 20, true));
        assertThat(DeviceSpec.parse("file:/tmp/a.img,prealloc=off"))
                .isEqualTo(new DeviceSpec.ImageFile(Path.of("/tmp/a.img"), ImageCache.NONE));
        assertThatThrownBy(() -> DeviceSpec.parse("file:/tmp/a.img,prealloc=metadata"))
                .isInstanceOf(UsageException.class)
                .hasMessage("bad --device 'file:/tmp/a.img,prealloc=metadata': prealloc=metadata (have prealloc=off"
                        + " and prealloc=full)");
        assertThatThrownBy(() -> DeviceSpec.parse("file:/tmp/a.img,prealloc=full,prealloc=off"))
                .isInstanceOf(UsageException.class).hasMessageEndingWith("prealloc= given twice");

        Path image = dir.resolve("full.img");
        long capacity = (20L << 20) + 8192;   // not a whole number of chunks
        byte[] junk = new byte[(int) capacity];
        java.util.Arrays.fill(junk, (byte) 0x5a);
        Files.write(image, junk);
        var spec = (DeviceSpec.ImageFile) DeviceSpec.parse("file:" + image + ",prealloc=full");
        try (FileBlockDevice device = spec.open(capacity, 4096, notice -> { })) {
            assertThat(device.stats().bytesWritten()).isEqualTo(capacity);
        }
        assertThat(Files.readAllBytes(image)).isEqualTo(new byte[(int) capacity]);
        assertThat(spec.describe(capacity)).isEqualTo("file:" + image + " (20MiB, prealloc=full)");

        Path sparse = dir.resolve("sparse.img");
        var fresh = (DeviceSpec.ImageFile) DeviceSpec.parse("file:" + sparse + ",prealloc=full");
        fresh.open(capacity, 4096, notice -> { }).close();
        Process stat = new ProcessBuilder("stat", "-c", "%b %B", sparse.toString()).start();
        String[] blocks = new String(stat.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                .strip().split(" ");
        assertThat(stat.waitFor()).isZero();
        assertThat(Long.parseLong(blocks[0]) * Long.parseLong(blocks[1])).as("allocated on the host, no holes")
                .isGreaterThanOrEqualTo(capacity);
    }

    @Test
    void cacheHostOpensBufferedWithoutANotice() throws IOException, UsageException {
        List<String> notices = new ArrayList<>();
        var spec = (DeviceSpec.ImageFile) DeviceSpec.parse("file:" + dir.resolve("host.img") + ",cache=host");
        try (FileBlockDevice device = spec.open(1L << 20, 4096, notices::add)) {
            assertThat(device.directIo()).isFalse();
        }
        assertThat(notices).isEmpty();
        assertThat(spec.describe(1L << 20)).isEqualTo("file:" + dir.resolve("host.img") + " (1MiB, cache=host)");
    }

    @Test
    void aRefusedDirectOpenFallsBackToBufferedInOneLine() throws IOException {
        List<String> notices = new ArrayList<>();
        List<Boolean> asked = new ArrayList<>();
        Path image = dir.resolve("refused.img");
        FileBlockDevice device = ImageCache.NONE.open(image, 4096, direct -> {
            asked.add(direct);
            if (direct) {
                throw new NotSupportedException("the filesystem of " + image + " does not support direct I/O");
            }
            return FileBlockDevice.open(image, 4096, 1L << 20, false);
        }, notices::add);
        try (device) {
            assertThat(device.directIo()).isFalse();
        }
        assertThat(asked).containsExactly(true, false);
        assertThat(notices).containsExactly("iomap: " + image + ": O_DIRECT refused (the filesystem of " + image
                + " does not support direct I/O); using buffered I/O through the host's page cache instead"
                + " (cache=host)");
    }

    @Test
    void cacheNoneOpensWithDirectIoWhereTheHostTakesIt() throws IOException {
        List<String> notices = new ArrayList<>();
        Path image = dir.resolve("direct.img");
        Assumptions.assumeTrue(4096 % ImageCache.hostBlockSize(image) == 0,
                "the temporary directory's filesystem has blocks larger than 4 KiB");
        try (FileBlockDevice device = ImageCache.NONE.open(image, 4096,
                direct -> FileBlockDevice.open(image, 4096, 1L << 20, direct), notices::add)) {
            // Either the host takes O_DIRECT and nothing is said, or it refuses and one line says so.
            assertThat(device.directIo()).as(notices.toString()).isEqualTo(notices.isEmpty());
            assertThat(notices).hasSizeLessThanOrEqualTo(1);
        }
    }

    @Test
    void blocksSmallerThanTheHostsAreOpenedBufferedWithoutANotice() throws IOException {
        Assumptions.assumeTrue(Files.getFileStore(dir).getBlockSize() > 512,
                "the temporary directory's filesystem has 512-byte blocks, so O_DIRECT would apply to them");
        List<String> notices = new ArrayList<>();
        List<Boolean> asked = new ArrayList<>();
        Path image = dir.resolve("small-blocks.img");
        try (FileBlockDevice device = ImageCache.NONE.open(image, 512, direct -> {
            asked.add(direct);
            return FileBlockDevice.open(image, 512, 1L << 20, direct);
        }, notices::add)) {
            assertThat(device.directIo()).isFalse();
        }
        assertThat(asked).containsExactly(false);
        assertThat(notices).isEmpty();

        Path job = Files.writeString(dir.resolve("w.fio"), JOB);
        Path benched = dir.resolve("bench-512.img");
        Cli bench = Cli.run("bench", "--adapter=" + SnapAdapter.NAME, "--progress=never", "--block-size=512",
                "--device=file:" + benched, "--output-format=json", job.toString());
        assertThat(bench.status()).as(bench.err()).isZero();
        assertThat(bench.err()).doesNotContain("O_DIRECT");
        Files.delete(benched);
    }
}
