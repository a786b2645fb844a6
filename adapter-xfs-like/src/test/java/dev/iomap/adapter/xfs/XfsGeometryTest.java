package dev.iomap.adapter.xfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.InvalidRangeException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The size limits of the format and the geometry mkfs chooses for large devices. */
class XfsGeometryTest {

    private static long leaves(int blockSize, long agBlocks) {
        return Math.ceilDiv(agBlocks, XfsGeometry.freeLeafSpan(blockSize))
                + Math.ceilDiv(agBlocks, XfsGeometry.refcountLeafSpan(blockSize));
    }

    @Test
    void theLargestGroupIsWhatOneHeaderBitmapAddresses() {
        assertThat(XfsGeometry.maxAgBlocks(512)).isEqualTo(55_332);
        assertThat(XfsGeometry.maxAgBlocks(4096)).isEqualTo(4_624_334);
        assertThat(XfsGeometry.maxAgBlocks(65536)).isEqualTo(1_224_404_578);
        assertThat(XfsGeometry.maxBlocks(4096)).isEqualTo(303_060_353_024L);
    }

    /**
     * One inode slot per 16 KiB of device, whatever the block size: a 1 GiB image holds 65,536 files, so
     * that a tree of small files fills the space before it runs out of inodes.
     */
    @ParameterizedTest
    @ValueSource(ints = {1024, 4096, 65536})
    void theDefaultFormatHasAnInodeSlotPer16KiBOfDevice(int blockSize) throws Exception {
        long totalBlocks = (1L << 30) / blockSize;
        XfsGeometry geometry = XfsGeometry.choose(blockSize, totalBlocks, Map.of());
        assertThat(geometry.inodeCount()).isGreaterThanOrEqualTo(65_536);
        assertThat(geometry.inodeTableBlocks()).isEqualTo(Math.ceilDiv(65_536 + 1, XfsLayout.inodesPerBlock(blockSize)));
    }

    @ParameterizedTest
    @ValueSource(ints = {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536})
    void everyLeafOfTheLargestGroupHasABitAndTheLimitFitsAByteOffset(int blockSize) {
        long largest = XfsGeometry.maxAgBlocks(blockSize);
        long capacity = XfsGeometry.leafBitmapCapacity(blockSize);
        assertThat(leaves(blockSize, largest)).isLessThanOrEqualTo(capacity);
        assertThat(leaves(blockSize, largest + 1)).isGreaterThan(capacity);
        assertThat(XfsGeometry.AG_HEADER_FIXED_BYTES + Math.ceilDiv(capacity, 8))
                .isEqualTo(MetadataBlock.maxPayload(blockSize));
        assertThat(Math.multiplyExact(XfsGeometry.maxBlocks(blockSize), blockSize)).isPositive();
    }

    @Test
    void sixteenTebibytesOfFourKibibyteBlocks() throws Exception {
        long total = 1L << 32;
        XfsGeometry geometry = XfsGeometry.choose(4096, total, Map.of());
        assertThat(geometry.journalBlocks()).isEqualTo(16_384);
        assertThat(geometry.inodeTableBlocks()).isEqualTo(Math.ceilDiv((1 << 22) + 1, XfsLayout.inodesPerBlock(4096)));
        assertThat(geometry.agCount()).isEqualTo(929);
        assertThat(geometry.agBlocks()).isEqualTo(Math.ceilDiv(total - geometry.dataStart(), 929))
                .isLessThanOrEqualTo(XfsGeometry.maxAgBlocks(4096));
        assertThat(geometry.agLength(928)).isPositive().isLessThanOrEqualTo(geometry.agBlocks());
        assertThat(geometry.agStart(928) + geometry.agLength(928)).isEqualTo(total);
        assertThat(geometry.agOf(total - 1)).isEqualTo(928);
        assertThat((long) geometry.leaves(0)).isLessThanOrEqualTo(XfsGeometry.leafBitmapCapacity(4096));
    }

    @Test
    void tooFewGroupsForTheDeviceAreRefusedNamingTheFewest() {
        assertThatThrownBy(() -> XfsGeometry.choose(4096, 1L << 32, Map.of("agcount", "4")))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessageEndingWith("larger than one group header addresses (4624334 blocks): use agcount of at"
                        + " least 929");
    }

    @Test
    void theJournalIsClampedAndAskingForMoreThanTwoGibibytesIsRefused() throws Exception {
        assertThat(XfsGeometry.choose(4096, 16_384, Map.of()).journalBlocks()).isEqualTo(512);
        assertThat(XfsGeometry.choose(4096, 1L << 24, Map.of()).journalBlocks()).isEqualTo(16_384);
        assertThat(XfsGeometry.choose(4096, 1L << 24, Map.of("journalblocks", "524288")).journalBlocks())
                .isEqualTo(524_288);
        assertThatThrownBy(() -> XfsGeometry.choose(4096, 1L << 24, Map.of("journalblocks", "524289")))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("xfs-like: format property journalblocks=524289 is outside [64, 524288]");
    }

    @Test
    void formatRefusesOneBlockPastWhatTheFormatAddresses() throws Exception {
        long largest = XfsGeometry.maxBlocks(4096);
        assertThat(XfsFormatter.check(4096, largest * 4096, FormatOptions.blockSize(4096)).agCount())
                .isEqualTo(XfsGeometry.MAX_AG_COUNT);
        assertThatThrownBy(() -> XfsFormatter.check(4096, (largest + 1) * 4096, FormatOptions.blockSize(4096)))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("xfs-like addresses at most 303060353024 blocks of 4096 bytes (1.1 PiB: 65536 allocation"
                        + " groups of at most 4624334 blocks, what one group header's leaf bitmap covers); the device"
                        + " has 303060353025 blocks: use a smaller size or larger blocks");
    }
}
