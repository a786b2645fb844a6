package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What statfs says is available ({@code f_bavail}, df's "Available") fits in one file: the indirect
 * blocks that map a file's data come out of the same free space, so they are not counted as available
 * (xfstests generic/103 fallocates everything df says is available but 512 KiB, and failed ENOSPC when
 * the free blocks were all said to be available), and neither is the new file's dinode block. And no more than that is said: one block more than
 * the available count does not fit beside its indirect blocks.
 */
class AvailableSpaceTest {
    private static final int MIB = 1 << 20;
    private static final long DINODE = 1;

    @ParameterizedTest(name = "block={0} data={1}")
    @CsvSource({"4096, ordered", "1024, ordered", "1024, journal"})
    void aFileAsLargeAsWhatIsAvailableFits(int blockSize, String data) throws IOException {
        RamBlockDevice ram = new RamBlockDevice(blockSize, 64L * MIB);
        IomapFileSystems.format("gfs2-like", ram, FormatOptions.blockSize(blockSize));
        MountOptions options = MountOptions.defaults().withAdapterOptions(Map.of("data", data));
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", ram, options)) {
            FsStat before = fs.statfs();
            Gfs2Layout layout = layoutOf(blockSize);
            long available = before.availableBlocks();

            assertThat(available).as("available, of %d free", before.freeBlocks()).isLessThan(before.freeBlocks());
            // The new file's dinode takes a block of the free ones too.
            assertThat(DINODE + available + layout.indirectBlocksFor(available)).isLessThanOrEqualTo(before.freeBlocks());
            assertThat(DINODE + available + 1 + layout.indirectBlocksFor(available + 1)).as("one block more does not fit")
                    .isGreaterThan(before.freeBlocks());
            try (IomapFile file = fs.create("/all")) {
                file.fallocate(FallocateMode.ALLOCATE, 0, available * blockSize, false);
                file.fsync();
            }
            assertThat(fs.statfs().freeBlocks()).as("free after the fallocate")
                    .isEqualTo(before.freeBlocks() - DINODE - available - layout.indirectBlocksFor(available));
        }
    }

    /** A layout of that block size, for its pointer counts (they depend on the block size alone). */
    private static Gfs2Layout layoutOf(int blockSize) throws IOException {
        RamBlockDevice ram = new RamBlockDevice(blockSize, 64L * MIB);
        IomapFileSystems.format("gfs2-like", ram, FormatOptions.blockSize(blockSize));
        return Gfs2Layout.read(ram);
    }
}
