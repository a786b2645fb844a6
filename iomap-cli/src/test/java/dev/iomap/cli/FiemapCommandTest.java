package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileExtent;
import dev.iomap.api.FileExtent.Flag;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code iomap fiemap}: its text is what {@code xfs_io -c "fiemap -v"} (and plain {@code fiemap})
 * printed for the same extents on the host, and on an image it shows the extents the Java API reports.
 */
class FiemapCommandTest {
    private static final long SECTOR = 512;

    @TempDir
    Path dir;

    private static FileExtent extent(long logicalSectors, long physicalSectors, long sectors, Flag... flags) {
        Set<Flag> set = flags.length == 0 ? Set.of() : EnumSet.of(flags[0], flags);
        return new FileExtent(logicalSectors * SECTOR, physicalSectors * SECTOR, sectors * SECTOR, set);
    }

    /**
     * The extents of a file on ext4 (two written runs, a preallocation past EOF) and what xfs_io 6.x
     * printed for them, captured on this project's build machine.
     */
    @Test
    void printsWhatXfsIoPrintsForTheSameExtents() {
        List<FileExtent> extents = List.of(extent(16, 69123688, 24), extent(80, 69123712, 8),
                extent(128, 209457168, 16, Flag.UNWRITTEN, Flag.LAST));
        assertThat(FiemapCommand.format("fm", extents, 0, Long.MAX_VALUE, 45056, true)).isEqualTo("""
                fm:
                 EXT: FILE-OFFSET      BLOCK-RANGE          TOTAL FLAGS
                   0: [0..15]:         hole                    16
                   1: [16..39]:        69123688..69123711      24   0x0
                   2: [40..79]:        hole                    40
                   3: [80..87]:        69123712..69123719       8   0x0
                   4: [88..127]:       hole                    40
                   5: [128..143]:      209457168..209457183    16 0x801
                """);
        assertThat(FiemapCommand.format("fm", extents, 0, Long.MAX_VALUE, 45056, false)).isEqualTo("""
                fm:
                \t0: [0..15]: hole
                \t1: [16..39]: 69123688..69123711
                \t2: [40..79]: hole
                \t3: [80..87]: 69123712..69123719
                \t4: [88..127]: hole
                \t5: [128..143]: 209457168..209457183
                """);
    }

    /** A block of data then a hole to EOF (xfs_io on ext4: one 4 KiB block, truncated up to 64 KiB). */
    @Test
    void printsTheHoleToEofAfterTheLastExtent() {
        List<FileExtent> extents = List.of(extent(0, 176481328, 8, Flag.LAST));
        assertThat(FiemapCommand.format("fm2", extents, 0, Long.MAX_VALUE, 65536, true)).isEqualTo("""
                fm2:
                 EXT: FILE-OFFSET      BLOCK-RANGE          TOTAL FLAGS
                   0: [0..7]:          176481328..176481335     8   0x1
                   1: [8..127]:        hole                   120
                """);
        assertThat(FiemapCommand.format("fm2", extents, 0, Long.MAX_VALUE, 65536, false)).isEqualTo("""
                fm2:
                \t0: [0..7]: 176481328..176481335
                \t1: [8..127]: hole
                """);
        assertThat(FiemapCommand.format("empty", List.of(), 0, Long.MAX_VALUE, 65536, true)).isEqualTo("empty:\n");
    }

    @Test
    void showsTheExtentsOfAFileInAnImage() throws IOException {
        Path image = dir.resolve("xfs.img");
        assertThat(Cli.run("mkfs", "--adapter=xfs-like", "--size=64m", image.toString()).status()).isZero();
        List<FileExtent> extents;
        try (FileBlockDevice device = FileBlockDevice.open(image, 4096, false);
                IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, MountOptions.defaults());
                IomapFile file = fs.create("/f")) {
            file.write(9 * 4096, ByteBuffer.wrap(new byte[4096]).put(0, (byte) 1));
            file.write(0, ByteBuffer.wrap(new byte[2 * 4096]).put(0, (byte) 2));
            file.fallocate(FallocateMode.ALLOCATE, 4 * 4096, 2 * 4096, true);
            file.fsync();
            extents = file.fiemap();
        }
        assertThat(extents).as("xfs-like's report").hasSizeGreaterThanOrEqualTo(3);
        Cli fiemap = Cli.run("fiemap", "--adapter=xfs-like", image.toString(), "/f");
        assertThat(fiemap.err()).isEmpty();
        assertThat(fiemap.status()).isZero();
        assertThat(fiemap.out()).isEqualTo(FiemapCommand.format("/f", extents, 0, Long.MAX_VALUE, 10 * 4096, true));
        List<String> lines = fiemap.out().lines().toList();
        assertThat(lines.get(2)).as("blocks 0-1").startsWith("   0: [0..15]: ").endsWith(" 16   0x0");
        assertThat(lines.get(3)).as("the hole before the preallocation").startsWith("   1: [16..31]: ")
                .contains(" hole ").endsWith(" 16");
        assertThat(lines.get(4)).as("the preallocation").startsWith("   2: [32..47]: ").endsWith(" 16 0x800");
        assertThat(lines.getLast()).as("block 9, the last").startsWith("   4: [72..79]: ").endsWith("  8   0x1");
        Cli range = Cli.run("fiemap", "--adapter=xfs-like", "--plain", "--offset=4k", "--length=4k",
                image.toString(), "/f");
        assertThat(range.out()).as("block 1 alone")
                .isEqualTo("/f:\n\t0: [8..15]: " + (extents.getFirst().physical() / SECTOR + 8) + ".."
                        + (extents.getFirst().physical() / SECTOR + 15) + "\n");
        Files.delete(image);
    }
}
