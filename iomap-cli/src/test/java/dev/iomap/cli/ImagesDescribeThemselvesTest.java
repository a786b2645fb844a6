package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13: fsck, stat and mount read the adapter and the block size from the image's superblock,
 * so that an image made with any adapter and block size needs no --adapter or --block-size; one given
 * that disagrees with the image is refused in one line, as is an image no adapter recognises. Mount
 * is checked only up to its refusals: mounting for real needs FUSE. Images are sparse, in a
 * temporary directory deleted afterwards.
 */
@Timeout(300)
class ImagesDescribeThemselvesTest {
    /** Every block size the adapters format with: the powers of two from 512 to 64 KiB. */
    static final List<String> BLOCK_SIZES = List.of("512", "1k", "2k", "4k", "8k", "16k", "32k", "64k");
    private static final ZoneLayout ZONES = new ZoneLayout(1L << 20, 1L << 20, 8, 1, 0);

    @TempDir
    Path dir;

    @Test
    void fsckAndStatNeedNoFlagsOnAnImageOfAnyAdapterAndBlockSize() throws IOException {
        for (String adapter : List.of("xfs-like", "snapfs")) {
            for (String blockSize : BLOCK_SIZES) {
                Path image = mkfs(adapter, blockSize);
                assertFsckClean(image, adapter, Units.parseSize(blockSize, 1024));
                // 4 KiB pages under every block size: larger blocks get folios of at least one block
                Cli stat = Cli.run("stat", image.toString());
                assertThat(stat.status()).as(stat.err()).isZero();
                assertThat(stat.out()).as(image.toString())
                        .contains("adapter      : " + adapter + " (")
                        .contains("block size   : " + Units.parseSize(blockSize, 1024) + "\n")
                        .contains("page cache   : page size 4096,");
            }
        }
    }

    @Test
    void fsckAndStatNeedNoFlagsOnAZonedImage() throws IOException {
        for (String size : BLOCK_SIZES) {
            int blockSize = Math.toIntExact(Units.parseSize(size, 1024));
            Path image = zonefs(blockSize);
            assertFsckClean(image, "zonefs-like", blockSize);
            Cli stat = Cli.run("stat", image.toString());
            assertThat(stat.status()).as(stat.err()).isZero();
            assertThat(stat.out()).contains("adapter      : zonefs-like (").contains("block size   : " + blockSize + "\n");
        }
    }

    @Test
    void flagsThatAgreeWithTheImageAreAccepted() throws IOException {
        Path image = mkfs("xfs-like", "1k");
        Cli fsck = Cli.run("fsck", "--adapter=xfs-like", "--block-size=1024", image.toString());
        assertThat(fsck.status()).as(fsck.err()).isZero();
        assertThat(fsck.out()).startsWith(image + ": clean (xfs-like, 1024-byte blocks; checked ");
    }

    @Test
    void aBlockSizeOtherThanTheImagesIsRefusedInOneLine() throws IOException {
        Path image = mkfs("xfs-like", "1k");
        String expected = "iomap: " + image + " holds a xfs-like filesystem with 1024-byte blocks, not 4096"
                + " (--block-size)\n";
        for (List<String> command : List.of(List.of("fsck"), List.of("stat"), List.of("mount"))) {
            assertRefused(run(command, "--block-size=4k", image), expected);
        }
        Path snapfs = mkfs("snapfs", "64k");
        assertRefused(run(List.of("fsck"), "--block-size=512", snapfs), "iomap: " + snapfs
                + " holds a snapfs filesystem with 65536-byte blocks, not 512 (--block-size)\n");
        Path zoned = zonefs(4096);
        assertRefused(run(List.of("fsck"), "--block-size=1k", zoned), "iomap: " + zoned
                + " holds a zonefs-like filesystem with 4096-byte blocks, not 1024 (--block-size)\n");
    }

    @Test
    void anAdapterOtherThanTheImagesIsRefusedInOneLine() throws IOException {
        Path image = mkfs("xfs-like", "4k");
        String expected = "iomap: " + image + " holds a xfs-like filesystem, not snapfs (--adapter)\n";
        for (List<String> command : List.of(List.of("fsck"), List.of("stat"), List.of("mount"))) {
            assertRefused(run(command, "--adapter=snapfs", image), expected);
        }
        Path zoned = zonefs(4096);
        assertRefused(run(List.of("stat"), "--adapter=xfs-like", zoned),
                "iomap: " + zoned + " holds a zonefs-like filesystem, not xfs-like (--adapter)\n");
    }

    @Test
    void anImageNoAdapterRecognisesIsRefusedInOneLine() throws IOException {
        Path image = dir.resolve("blank.img");
        try (var file = new RandomAccessFile(image.toFile(), "rw")) {
            file.setLength(16L << 20);
        }
        String expected = "iomap: " + image + " holds no filesystem that an adapter recognises (adapters:"
                + " bcachefs-like, counting-snapfs, gfs2-like, snapfs, xfs-like, zonefs-like): give --adapter\n";
        for (List<String> command : List.of(List.of("fsck"), List.of("stat"), List.of("mount"))) {
            assertRefused(run(command, null, image), expected);
        }
        Cli fsck = Cli.run("fsck", "--adapter=xfs-like", image.toString());
        assertThat(fsck.status()).isEqualTo(1);
        assertThat(fsck.out()).startsWith(image + ": 1 problem (xfs-like; checked the superblock only):\n"
                + "  not a xfs-like image: magic 0x0000000000000000 at device offset 0, expected ");
    }

    /** @return an image made by {@code iomap mkfs} (which mounts it with pages as large as its blocks) */
    private Path mkfs(String adapter, String blockSize) throws IOException {
        Path image = dir.resolve(adapter + "-" + blockSize + ".img");
        Cli mkfs = Cli.run("mkfs", "--adapter=" + adapter, "--block-size=" + blockSize, "--size=32m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        return image;
    }

    /** @return a sparse file holding a zoned device of {@link #ZONES} blocks, zonefs-like formatted */
    private Path zonefs(int blockSize) throws IOException {
        Path image = dir.resolve("zonefs-" + blockSize + ".img");
        Files.deleteIfExists(image);
        var file = FileBlockDevice.open(image, blockSize, ZONES.backingBytes(blockSize), false);
        try (ZonedDevice zoned = ZonedDevice.create(file, ZONES)) {
            IomapFileSystems.format("zonefs-like", zoned, FormatOptions.blockSize(blockSize));
        }
        return image;
    }

    private static void assertFsckClean(Path image, String adapter, long blockSize) {
        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        assertThat(fsck.out()).startsWith(image + ": clean (" + adapter + ", " + blockSize + "-byte blocks; checked ")
                .hasLineCount(1);
        assertThat(fsck.err()).isEmpty();
    }

    /** @return the command run on {@code image} with {@code option} (if not null); mount gets a mount point */
    private Cli run(List<String> command, String option, Path image) throws IOException {
        List<String> args = new java.util.ArrayList<>(command);
        if (option != null) {
            args.add(option);
        }
        args.add(image.toString());
        if (command.getFirst().equals("mount")) {
            args.add(Files.createDirectories(dir.resolve("mnt")).toString());
        }
        return Cli.run(args.toArray(String[]::new));
    }

    private static void assertRefused(Cli run, String expected) {
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err()).isEqualTo(expected);
        assertThat(run.out()).isEmpty();
    }
}
