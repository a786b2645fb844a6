package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12: fsck and stat open the image read-only under a shared lock. Any number of them may
 * hold an image at once, but not while a device writes it; mount and mkfs, which write, are refused
 * while one of them holds it. Neither changes a byte of the image, not even an unclean one: fsck
 * says it is unclean, and stat mounts it with the journal replayed in memory only.
 */
@Timeout(120)
class ReadOnlyImagesTest {
    private static final int BLOCK = 4096;
    private static final long SIZE = 16L << 20;

    @TempDir
    Path dir;

    @Test
    void fsckAndStatRunWhileAnotherReaderHoldsTheImage() throws IOException {
        Path image = formatted();
        byte[] before = Files.readAllBytes(image);
        try (var reader = FileBlockDevice.openReadOnly(image, BLOCK, false)) {
            assertThat(reader.readOnly()).isTrue();
            Cli fsck = Cli.run("fsck", image.toString());
            assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
            Cli stat = Cli.run("stat", image.toString());
            assertThat(stat.status()).as(stat.err()).isZero();
            assertThat(stat.out()).contains("adapter      : xfs-like");
        }
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
    }

    @Test
    void fsckAndStatAreRefusedWhileADeviceWritesTheImage() throws IOException {
        Path image = formatted();
        try (var writer = FileBlockDevice.open(image, BLOCK, false)) {
            assertThat(writer.readOnly()).isFalse();
            for (String command : List.of("fsck", "stat")) {
                assertRefused(Cli.run(command, image.toString()), image, "open for writing");
            }
        }
    }

    @Test
    void mountAndMkfsAreRefusedWhileAReaderHoldsTheImage() throws IOException {
        Path image = formatted();
        byte[] before = Files.readAllBytes(image);
        Path mountPoint = Files.createDirectories(dir.resolve("mnt"));
        try (var reader = FileBlockDevice.openReadOnly(image, BLOCK, false)) {
            assertThat(reader.readOnly()).isTrue();
            assertRefused(Cli.run("mount", "--busy-timeout=0", image.toString(), mountPoint.toString()), image,
                    "open read-only");
            assertRefused(Cli.run("mkfs", "--size=16m", image.toString()), image, "open read-only");
            assertRefused(Cli.run("mkfs", "--force", "--size=8m", image.toString()), image, "open read-only");
        }
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
    }

    @Test
    void anUncleanImageIsReportedByFsckAndMountedByStatWithoutChangingIt() throws IOException {
        Path image = unclean();
        byte[] before = Files.readAllBytes(image);

        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.err()).isEqualTo(1);
        assertThat(fsck.out()).contains("the image was not cleanly unmounted").contains("mount it to replay them");
        assertThat(fsck.err()).isEmpty();

        Cli stat = Cli.run("stat", image.toString());
        assertThat(stat.status()).as(stat.err()).isZero();
        assertThat(stat.out()).as("the journal replayed in memory").contains("root         : 1 entries");

        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
        Cli again = Cli.run("fsck", image.toString());
        assertThat(again.out()).as("still unclean: nothing was replayed on it").contains("not cleanly unmounted");
    }

    /**
     * Every adapter's probe and fsck on a read-only device, which refuses any write: they only read.
     * The unclean xfs-like image is one whose journal a writing fsck would replay.
     */
    @Test
    void everyAdaptersProbeAndFsckOnlyRead() throws IOException {
        Path snapfs = dir.resolve("snapfs.img");
        assertThat(Cli.run("mkfs", "--adapter=snapfs", "--size=16m", snapfs.toString()).status()).isZero();
        Path zoned = dir.resolve("zoned.img");
        var layout = new ZoneLayout(1L << 20, 1L << 20, 8, 1, 0);
        try (var zonedDevice = ZonedDevice.create(FileBlockDevice.open(zoned, BLOCK, layout.backingBytes(BLOCK), false),
                layout)) {
            IomapFileSystems.format("zonefs-like", zonedDevice, FormatOptions.blockSize(BLOCK));
        }
        Map<String, Path> images = Map.of("xfs-like", formatted(), "snapfs", snapfs, "zonefs-like", zoned);
        for (var entry : images.entrySet()) {
            try (var file = FileBlockDevice.openReadOnly(entry.getValue(), BLOCK, false);
                    BlockDevice device = ZonedDevice.holdsZones(file) ? ZonedDevice.open(file) : file) {
                assertThat(device.readOnly()).isTrue();
                assertThat(Adapters.probe(device)).as(entry.getKey()).containsExactly(entry.getKey());
                assertThat(IomapFileSystems.fsck(entry.getKey(), device).problems()).as(entry.getKey()).isEmpty();
            }
        }
        try (var device = FileBlockDevice.openReadOnly(unclean(), BLOCK, false)) {
            assertThat(Adapters.probe(device)).containsExactly("xfs-like");
            assertThat(IomapFileSystems.fsck("xfs-like", device).problems())
                    .anySatisfy(problem -> assertThat(problem).contains("not cleanly unmounted"));
        }
    }

    private static void assertRefused(Cli run, Path image, String holder) {
        assertThat(run.status()).as(run.err()).isEqualTo(1);
        assertThat(run.err()).startsWith("iomap: " + image + " is in use: another device has it " + holder)
                .hasLineCount(1).doesNotContain("Exception");
        assertThat(run.out()).isEmpty();
    }

    private Path formatted() {
        Path image = dir.resolve("fs.img");
        Cli mkfs = Cli.run("mkfs", "--size=16m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        return image;
    }

    /**
     * @return a sparse image of an xfs-like filesystem as a crash leaves it: a file created and
     *     fsynced (so in the journal), never unmounted
     */
    private Path unclean() throws IOException {
        try (var ram = new RamBlockDevice(BLOCK, SIZE)) {
            IomapFileSystems.format("xfs-like", ram, FormatOptions.blockSize(BLOCK));
            RamBlockDevice crashed;
            try (IomapFileSystem fs = IomapFileSystems.mount("xfs-like", ram, MountOptions.defaults())) {
                try (IomapFile file = fs.create("/journalled")) {
                    file.write(0, ByteBuffer.wrap("in the journal".getBytes(StandardCharsets.UTF_8)));
                    file.fsync();
                }
                crashed = ram.copy();
            }
            return sparseFile(crashed, dir.resolve("unclean.img"));
        }
    }

    private static Path sparseFile(RamBlockDevice ram, Path image) throws IOException {
        byte[] zeroes = new byte[BLOCK];
        try (var file = FileBlockDevice.open(image, BLOCK, ram.capacity(), false)) {
            for (long offset = 0; offset < ram.capacity(); offset += BLOCK) {
                byte[] block = ram.peek(offset, BLOCK);
                if (!Arrays.equals(block, zeroes)) {
                    file.write(offset, ByteBuffer.wrap(block), IoPurpose.METADATA).join();
                }
            }
        }
        return image;
    }
}
