package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12: mkfs refuses, unless --force, an image holding an emulated zoned device (a plain file
 * with the zone state in front of the zones), whose filesystem its probe of the raw file cannot
 * see: the probe looks through the zones too. The zoned images are made as a library user makes
 * them, with {@link ZonedDevice#create}: the commands themselves make no zoned images.
 */
@Timeout(120)
class ZonedImageMkfsTest {
    private static final int BLOCK = 4096;
    private static final ZoneLayout LAYOUT = new ZoneLayout(1L << 20, 1L << 20, 8, 1, 0);

    @TempDir
    Path dir;

    @Test
    void mkfsRefusesAZonefsLikeImageUnlessForced() throws IOException {
        Path image = zoned(true);
        byte[] before = Files.readAllBytes(image);

        for (String size : new String[] {"--size=" + before.length, "--size=8m"}) {
            Cli mkfs = Cli.run("mkfs", size, image.toString());
            assertThat(mkfs.status()).isEqualTo(1);
            assertThat(mkfs.err()).isEqualTo("iomap: " + image + " already holds a zonefs-like filesystem on an"
                    + " emulated zoned device: give --force to overwrite it\n");
            assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
        }
        Cli fsck = Cli.run("fsck", "--adapter=zonefs-like", image.toString());
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("fsck changed nothing").isTrue();

        Cli forced = Cli.run("mkfs", "--force", "--size=16m", image.toString());
        assertThat(forced.status()).as(forced.err()).isZero();
        assertThat(Cli.run("fsck", image.toString()).status()).isZero();
    }

    @Test
    void mkfsRefusesAZonedImageHoldingNoFilesystemUnlessForced() throws IOException {
        Path image = zoned(false);
        byte[] before = Files.readAllBytes(image);

        Cli mkfs = Cli.run("mkfs", "--size=16m", image.toString());
        assertThat(mkfs.status()).isEqualTo(1);
        assertThat(mkfs.err()).isEqualTo("iomap: " + image + " already holds an emulated zoned device (8 zones of"
                + " 1048576 bytes): give --force to overwrite it\n");
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();

        assertThat(Cli.run("mkfs", "--force", "--size=16m", image.toString()).status()).isZero();
    }

    /** @return a sparse file holding a zoned device of {@link #LAYOUT}, zonefs-like formatted if asked */
    private Path zoned(boolean formatted) throws IOException {
        Path image = dir.resolve("zoned.img");
        var file = FileBlockDevice.open(image, BLOCK, LAYOUT.backingBytes(BLOCK), false);
        try (ZonedDevice zoned = ZonedDevice.create(file, LAYOUT)) {
            if (formatted) {
                IomapFileSystems.format("zonefs-like", zoned, FormatOptions.blockSize(BLOCK));
            }
        }
        return image;
    }
}
