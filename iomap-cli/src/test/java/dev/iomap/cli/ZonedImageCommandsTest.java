package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20: {@code mkfs --adapter zonefs-like -o zone-size=...} makes an image that carries its zones,
 * which fsck and stat then open with no flags, whose zone state (the sequential files' sizes) survives
 * closing it, and whose mistakes are refused in one line before anything is written.
 */
@Timeout(120)
class ZonedImageCommandsTest {
    private static final int BLOCK = 4096;
    private static final ZoneLayout LAYOUT = new ZoneLayout(1 << 20, 768 << 10, 8, 2, 2);

    @TempDir
    Path dir;

    @Test
    void mkfsMakesAZonedImageThatFsckAndStatOpenWithNoFlags() throws IOException {
        Path image = dir.resolve("zoned.img");

        Cli mkfs = Cli.run("mkfs", "--adapter=zonefs-like", "--size=8m", "-o",
                "zone-size=1m,conventional=2,capacity=768k,max-open=2", image.toString());

        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        assertThat(mkfs.out()).startsWith(image + ": zonefs-like filesystem, 8388608 bytes, block size 4096, ")
                .endsWith(", on a zoned device of 8 zones of 1048576 bytes (2 conventional, capacity 786432,"
                        + " max open 2)\n");
        assertThat(Files.size(image)).isEqualTo(LAYOUT.backingBytes(BLOCK));
        try (FileBlockDevice file = FileBlockDevice.openReadOnly(image, BLOCK, false);
                ZonedDevice zoned = ZonedDevice.probe(file).orElseThrow()) {
            assertThat(zoned.layout()).isEqualTo(LAYOUT);
        }
        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        assertThat(fsck.out()).startsWith(image + ": clean (zonefs-like, 4096-byte blocks; checked ");
        Cli stat = Cli.run("stat", image.toString());
        assertThat(stat.status()).as(stat.err()).isZero();
        assertThat(stat.out()).contains("adapter      : zonefs-like (").contains("block size   : 4096\n");
    }

    @Test
    void appendsToASequentialFileSurviveClosingTheImage() throws IOException {
        Path image = dir.resolve("zoned.img");
        assertThat(Cli.run("mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "zone-size=1m,conventional=2",
                image.toString()).status()).isZero();
        byte[] data = new byte[3 * BLOCK];
        Arrays.fill(data, (byte) 0x5a);
        try (ZonedDevice device = ZonedDevice.open(FileBlockDevice.open(image, BLOCK, false));
                IomapFileSystem fs = IomapFileSystems.mount("zonefs-like", device, MountOptions.defaults());
                IomapFile seq = fs.open("/seq/0")) {
            seq.write(0, ByteBuffer.wrap(data));
            seq.fsync();
        }

        assertThat(Cli.run("fsck", image.toString()).status()).isZero();
        try (ZonedDevice device = ZonedDevice.open(FileBlockDevice.open(image, BLOCK, false));
                IomapFileSystem fs = IomapFileSystems.mount("zonefs-like", device, MountOptions.defaults());
                IomapFile seq = fs.open("/seq/0")) {
            assertThat(seq.size()).isEqualTo(data.length);
            ByteBuffer read = ByteBuffer.allocate(data.length);
            seq.read(0, read);
            assertThat(read.array()).isEqualTo(data);
            assertThat(fs.open("/cnv/0").size()).as("a conventional file's size is its zone's").isEqualTo(1 << 20);
        }
    }

    @Test
    void mkfsForceFormatsAZonedImageAgainOnItsOwnZones() throws IOException {
        Path image = dir.resolve("zoned.img");
        assertThat(Cli.run("mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "zone-size=1m,conventional=2,"
                + "capacity=768k,max-open=2", image.toString()).status()).isZero();

        Cli again = Cli.run("mkfs", "--adapter=zonefs-like", "--force", image.toString());

        assertThat(again.status()).as(again.err()).isZero();
        assertThat(again.out()).endsWith(", on a zoned device of 8 zones of 1048576 bytes (2 conventional,"
                + " capacity 786432, max open 2)\n");
        assertThat(Files.size(image)).isEqualTo(LAYOUT.backingBytes(BLOCK));
    }

    @Test
    void zoneMistakesAreRefusedBeforeAnythingIsWritten() throws IOException {
        Path image = dir.resolve("new.img");
        assertRefused(image, "iomap: xfs-like takes a plain block device, not zones: leave out -o zone-size,"
                + " conventional, capacity, max-open\n", "mkfs", "--size=8m", "-o", "zone-size=1m", image.toString());
        assertRefused(image, "iomap: zonefs-like needs a zoned device: give -o zone-size=SIZE[,conventional=N,"
                + "capacity=SIZE,max-open=N] (with --size, the zoned device's size)\n",
                "mkfs", "--adapter=zonefs-like", "--size=8m", image.toString());
        assertRefused(image, "iomap: bad zones: zone-size 1000 and capacity 1000 must be multiples of the block"
                + " size 4096\n", "mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "zone-size=1000", image.toString());
        assertRefused(image, "iomap: bad zones: zone capacity 2097152 must be in (0, zone size 1048576]\n",
                "mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "zone-size=1m,capacity=2m", image.toString());
        assertRefused(image, "iomap: bad zones: zone count 8 must be at least 1 and hold the 9 conventional"
                + " zones\n", "mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "zone-size=1m,conventional=9",
                image.toString());
        assertRefused(image, "iomap: bad zones: --size 8388608 holds 0 zones of 16777216 bytes (at least 1, at"
                + " most 2147483647)\n", "mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "zone-size=16m",
                image.toString());
        assertRefused(image, "iomap: bad -o max-open='many': not a count of zones (0 or more)\n",
                "mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "zone-size=1m,max-open=many", image.toString());
        assertRefused(image, "iomap: -o conventional describe zones: give -o zone-size=SIZE too\n",
                "mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "conventional=1", image.toString());
    }

    @Test
    void aZonedAdapterIsRefusedAPlainImage() throws IOException {
        Path image = dir.resolve("plain.img");
        assertThat(Cli.run("mkfs", "--size=16m", image.toString()).status()).isZero();
        byte[] before = Files.readAllBytes(image);

        Cli mkfs = Cli.run("mkfs", "--adapter=zonefs-like", "--force", image.toString());

        assertThat(mkfs.status()).isEqualTo(1);
        assertThat(mkfs.err()).isEqualTo("iomap: zonefs-like needs a zoned device: give -o zone-size=SIZE[,"
                + "conventional=N,capacity=SIZE,max-open=N] (with --size, the zoned device's size)\n");
        assertThat(Arrays.equals(Files.readAllBytes(image), before)).as("the image's bytes").isTrue();
        Cli fsck = Cli.run("fsck", "--adapter=zonefs-like", image.toString());
        assertThat(fsck.status()).isEqualTo(1);
        assertThat(fsck.err()).isEqualTo("iomap: " + image + " holds a xfs-like filesystem, not zonefs-like (--adapter)\n");
        Path blank = dir.resolve("blank.img");
        Files.write(blank, new byte[1 << 20]);
        Cli blankFsck = Cli.run("fsck", "--adapter=zonefs-like", blank.toString());
        assertThat(blankFsck.status()).isEqualTo(1);
        assertThat(blankFsck.err()).startsWith("iomap: zonefs-like needs a zoned device");
    }

    @Test
    void benchRunsOnZonesAndResetsAZoneWhenASequentialPassWraps() throws IOException {
        Path job = dir.resolve("append.fio");
        Files.writeString(job, "[append]\nrw=write\nbs=4k\nsize=256k\nloops=3\nend_fsync=1\nfilename=/seq/0\n");

        Cli bench = Cli.run("bench", "--progress=never", "--no-flusher", "--adapter=zonefs-like",
                "--zones=zone-size=1m,conventional=2", job.toString());

        assertThat(bench.status()).as(bench.err()).isZero();
        // Passes 2 and 3 reset the zone first, dropping the previous pass's appends from the cache
        // before any was written: the device takes the last pass alone.
        assertThat(bench.out()).contains("iomap stats (group 0): adapter=zonefs-like, ")
                .contains("  app      : written=768KiB, read=0B\n")
                .contains("  device   : written=256KiB (data=256KiB, metadata=0B)")
                .contains("  write amplification=0.333\n")
                .contains("  adapter  : zone.resets=2\n");
    }

    @Test
    void benchOnAZonedImageUsesItsAdapterAndZones() throws IOException {
        Path image = dir.resolve("zoned.img");
        assertThat(Cli.run("mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "zone-size=1m,conventional=2",
                image.toString()).status()).isZero();
        Path job = dir.resolve("cnv.fio");
        Files.writeString(job, "[cnv]\nrw=randwrite\nbs=4k\nsize=1m\nend_fsync=1\nfilename=/cnv/0\n");

        Cli bench = Cli.run("bench", "--progress=never", "--no-flusher", "--force", "--device=file:" + image, job.toString());

        assertThat(bench.status()).as(bench.err()).isZero();
        assertThat(bench.out()).contains("adapter=zonefs-like, device=file:" + image)
                .contains("  write amplification=1.000\n");
        assertThat(Files.size(image)).as("the image's own zones").isEqualTo(LAYOUT.backingBytes(BLOCK));
        assertThat(Cli.run("fsck", image.toString()).status()).isZero();

        Cli noZones = Cli.run("bench", "--adapter=zonefs-like", job.toString());
        assertThat(noZones.status()).isEqualTo(1);
        assertThat(noZones.err()).isEqualTo("iomap: zonefs-like needs a zoned device: give --zones zone-size=SIZE"
                + "[,conventional=N,capacity=SIZE,max-open=N]\n");
        Cli plain = Cli.run("bench", "--zones=zone-size=1m", job.toString());
        assertThat(plain.status()).isEqualTo(1);
        assertThat(plain.err()).isEqualTo("iomap: xfs-like takes a plain block device, not zones: leave out --zones\n");
    }

    private static void assertRefused(Path image, String error, String... args) {
        Cli mkfs = Cli.run(args);
        assertThat(mkfs.status()).as(mkfs.out()).isEqualTo(1);
        assertThat(mkfs.err()).isEqualTo(error);
        assertThat(image).as("nothing created").doesNotExist();
    }
}
