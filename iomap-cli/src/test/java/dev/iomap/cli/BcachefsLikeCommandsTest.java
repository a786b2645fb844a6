package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code iomap mkfs, fsck [--scrub], stat, bench} with {@code --adapter bcachefs-like} on a sparse
 * temporary image: its format properties (checksum type, compression), its counters (journal bytes,
 * checksum errors) in stat's and bench's reports, and a scrub that finds a flipped bit in a data extent
 * that a metadata-only fsck cannot see.
 */
class BcachefsLikeCommandsTest {
    private static final int BLOCK = 4096;
    /** 64 random 4 KiB writes, each followed by fdatasync. */
    private static final String TINY = String.join("\n",
            "[global]", "ioengine=psync", "rw=randwrite", "bs=4k", "size=256k", "fdatasync=1", "[tiny]");

    @TempDir
    Path dir;

    private Path mkfs(String... properties) {
        Path image = dir.resolve("bcachefs.img");
        String[] args = new String[4 + properties.length * 2];
        args[0] = "mkfs";
        args[1] = "--adapter=bcachefs-like";
        for (int i = 0; i < properties.length; i++) {
            args[2 + 2 * i] = "-o";
            args[3 + 2 * i] = properties[i];
        }
        args[args.length - 2] = "--size=32m";
        args[args.length - 1] = image.toString();
        Cli mkfs = Cli.run(args);
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        assertThat(mkfs.out()).startsWith(image + ": bcachefs-like filesystem, 33554432 bytes, block size 4096,");
        return image;
    }

    private String job() throws IOException {
        return Files.writeString(dir.resolve("tiny.fio"), TINY + "\n").toString();
    }

    /** Writes {@code /data}: 16 blocks, each filled with one byte value, so a block is easy to find. */
    private static byte[] writeDataFile(Path image) throws IOException {
        byte[] bytes = new byte[16 * BLOCK];
        for (int block = 0; block < 16; block++) {
            Arrays.fill(bytes, block * BLOCK, (block + 1) * BLOCK, (byte) (0xa0 + block));
        }
        try (FileBlockDevice device = FileBlockDevice.open(image, BLOCK, false);
                IomapFileSystem fs = IomapFileSystems.mount("bcachefs-like", device, MountOptions.defaults());
                IomapFile file = fs.create("/data")) {
            file.write(0, ByteBuffer.wrap(bytes));
            file.fsync();
        }
        return bytes;
    }

    /** @return the image offset of the first block holding {@code block}, or -1 */
    private static long find(Path image, byte[] block) throws IOException {
        byte[] buffer = new byte[BLOCK];
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "r")) {
            for (long offset = 0; offset + BLOCK <= file.length(); offset += BLOCK) {
                file.seek(offset);
                file.readFully(buffer);
                if (Arrays.equals(buffer, block)) {
                    return offset;
                }
            }
        }
        return -1;
    }

    @Test
    void mkfsWithFormatPropertiesThenFsckScrubAndStat() throws IOException {
        Path image = mkfs("checksum=xxhash64", "compression=lz4");
        writeDataFile(image);

        Cli fsck = Cli.run("fsck", image.toString());
        Cli scrub = Cli.run("fsck", "--scrub", image.toString());
        Cli stat = Cli.run("stat", image.toString());

        assertThat(fsck.status()).as(fsck.err()).isZero();
        assertThat(fsck.out()).startsWith(image + ": clean (bcachefs-like, 4096-byte blocks; checked");
        assertThat(scrub.status()).as(scrub.err() + scrub.out()).isZero();
        assertThat(scrub.out()).startsWith(image + ": clean (bcachefs-like, 4096-byte blocks; checked");
        assertThat(stat.status()).as(stat.err()).isZero();
        assertThat(stat.out()).contains("\nadapter      : bcachefs-like (capabilities: [DIRECTORIES,")
                .contains("DATA_CHECKSUMS")
                .contains("\nroot         : 1 entries\n")
                .containsPattern("\nadapter ctrs : .*checksum_errors=0");
    }

    @Test
    void mkfsRefusesFormatPropertiesItDoesNotTakeAndWritesNothing() {
        Path image = dir.resolve("refused.img");

        Cli unknown = Cli.run("mkfs", "--adapter=bcachefs-like", "-o", "nosuch=1", "--size=32m", image.toString());
        Cli badValue = Cli.run("mkfs", "--adapter=bcachefs-like", "-o", "compression=gzip", "--size=32m",
                image.toString());

        assertThat(unknown.status()).isEqualTo(1);
        assertThat(unknown.err()).startsWith("iomap: bcachefs-like format property 'nosuch' is unknown");
        assertThat(badValue.status()).isEqualTo(1);
        assertThat(badValue.err()).isEqualTo("iomap: bcachefs-like compression=gzip: use none, lz4 or zstd\n");
        assertThat(image).doesNotExist();
    }

    @Test
    void aScrubReportsAFlippedBitInADataExtentThatTheMetadataCheckCannotSee() throws IOException {
        Path image = mkfs();
        byte[] bytes = writeDataFile(image);
        long offset = find(image, Arrays.copyOfRange(bytes, 5 * BLOCK, 6 * BLOCK));
        assertThat(offset).as("block 5 of /data on the image").isPositive();
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
            file.seek(offset + 100);
            file.write(bytes[5 * BLOCK + 100] ^ 0x10);
        }

        Cli fsck = Cli.run("fsck", image.toString());
        Cli scrub = Cli.run("fsck", "--scrub", image.toString());

        assertThat(fsck.status()).as(fsck.out()).isZero();
        assertThat(scrub.status()).isEqualTo(1);
        assertThat(scrub.out()).startsWith(image + ": 1 problem (bcachefs-like, 4096-byte blocks; checked")
                .contains("\n  scrub: inode 2 at file offset 0 (65536 bytes): bcachefs-like: crc32c mismatch in the"
                        + " extent of inode 2 at file offset 0 (device blocks ");
    }

    @Test
    void benchOnTheImageReportsTheJournalOfKeys() throws IOException {
        Path image = mkfs();

        Cli bench = Cli.run("bench", "--progress=never", "--no-flusher", "--force", "--device=file:" + image, job());

        assertThat(bench.status()).as(bench.err()).isZero();
        assertThat(bench.out()).contains("iomap stats (group 0): adapter=bcachefs-like, device=file:")
                .contains("\n  app      : written=256KiB, read=0B\n")
                .containsPattern("\n  device   : written=[0-9]+KiB \\(data=256KiB, metadata=[1-9][0-9]*KiB\\),")
                .containsPattern("\n  adapter  : .*journal_bytes=[1-9][0-9]*")
                .containsPattern("journal_flushes=[1-9][0-9]*");
        Cli scrub = Cli.run("fsck", "--scrub", image.toString());
        assertThat(scrub.status()).as(scrub.out()).isZero();
    }

    @Test
    void compareOrderHintsOnTheSeedsSequentialJob() throws IOException {
        String job = Files.writeString(dir.resolve("seq.fio"), String.join("\n", "[global]", "ioengine=psync",
                "rw=write", "bs=128k", "size=4m", "end_fsync=1", "[seqwrite]") + "\n").toString();

        Cli cli = Cli.run("bench", "--progress=never", "--device=ram:64m", "--adapter=bcachefs-like",
                "--compare", "orderHints=false,true", job);

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.err()).isEqualTo("run 1/2: orderHints=false\nrun 2/2: orderHints=true\n");
        assertThat(cli.out()).startsWith("compare orderHints: false vs true (adapter bcachefs-like, block size 4096,")
                .containsPattern("\napp written \\(MiB\\) +4\\.00 +4\\.00 +1\\.000\n")
                .containsPattern("\ndata written \\(MiB\\) +4\\.00 +4\\.00 +1\\.000\n");
    }
}
