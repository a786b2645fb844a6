package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * The device contract on a RAM device whose memory comes in 2 MiB huge-page regions
 * ({@link RamBlockDevice#withHugePages}), then what the regions change: a write across a region
 * boundary, a short last region, never-written regions reading as zeroes, and copies.
 */
class HugePageRamBlockDeviceTest extends BlockDeviceContractTest {
    private static final int REGION = (int) AnonymousMemory.HUGE_PAGE_SIZE;

    @Override
    protected BlockDevice open(int blockSize, long capacity) {
        return RamBlockDevice.withHugePages(blockSize, capacity);
    }

    @Test
    void writeAcrossARegionBoundaryReadsBackAndLeavesTheRestZero() throws Exception {
        RamBlockDevice ram = RamBlockDevice.withHugePages(BLOCK, 3L * REGION + 5 * BLOCK);
        byte[] data = randomBytes(4 * BLOCK);
        long offset = REGION - 2L * BLOCK;

        await(ram.write(offset, ByteBuffer.wrap(data), IoPurpose.DATA));

        assertThat(ram.peek(offset, data.length)).isEqualTo(data);
        assertThat(ram.peek(offset - BLOCK, BLOCK)).containsOnly(0);
        assertThat(ram.peek(offset + data.length, BLOCK)).containsOnly(0);
        assertThat(ram.peek(2L * REGION, BLOCK)).containsOnly(0);
    }

    @Test
    void theShortLastRegionHoldsItsBlocks() throws Exception {
        long capacity = REGION + 3L * BLOCK;
        RamBlockDevice ram = RamBlockDevice.withHugePages(BLOCK, capacity);
        byte[] data = randomBytes(3 * BLOCK);

        await(ram.write(REGION, ByteBuffer.wrap(data), IoPurpose.DATA));

        assertThat(ram.peek(REGION, data.length)).isEqualTo(data);
        assertThat(ram.peek(0, BLOCK)).containsOnly(0);
    }

    @Test
    void aCopyHoldsTheSameBytesInMemoryOfItsOwn() throws Exception {
        RamBlockDevice ram = RamBlockDevice.withHugePages(BLOCK, 2L * REGION);
        byte[] data = randomBytes(2 * BLOCK);
        await(ram.write(REGION + BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA));

        RamBlockDevice copy = ram.copy();
        ram.poke(REGION + BLOCK, new byte[BLOCK], 0, BLOCK);

        assertThat(copy.peek(REGION + BLOCK, data.length)).isEqualTo(data);
        assertThat(ram.peek(REGION + BLOCK, BLOCK)).containsOnly(0);
    }

    @Test
    void discardedBlocksReadAsZeroAndTakeNewData() throws Exception {
        RamBlockDevice ram = RamBlockDevice.withHugePages(BLOCK, REGION);
        await(ram.write(0, ByteBuffer.wrap(randomBytes(2 * BLOCK)), IoPurpose.DATA));

        ram.discard(0, BLOCK);
        byte[] data = randomBytes(BLOCK);
        await(ram.write(BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA));

        assertThat(ram.peek(0, BLOCK)).containsOnly(0);
        assertThat(ram.peek(BLOCK, BLOCK)).isEqualTo(data);
    }

    @Test
    void blocksLargerThanAHugePageAreRefused() {
        assertThatThrownBy(() -> RamBlockDevice.withHugePages(2 * REGION, 4L * REGION))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("larger than a huge page");
    }

    @Test
    void anonymousMemoryIsZeroAlignedWritableAndGoneAfterClose() {
        assumeLinux();
        AnonymousMemory region = AnonymousMemory.tryMap(3L * REGION + 100, REGION, true);
        var segment = region.segment();

        assertThat(segment.byteSize()).isEqualTo(3L * REGION + 100);
        assertThat(segment.address() % REGION).isZero();
        byte[] probe = new byte[4096];
        segment.asByteBuffer().position(REGION - 2048).get(probe);
        assertThat(probe).containsOnly(0);
        segment.fill((byte) 7);
        segment.asByteBuffer().position((int) segment.byteSize() - 4096).get(probe);
        assertThat(probe).containsOnly(7);

        region.close();
        region.close();
        assertThatThrownBy(() -> segment.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void onLinuxTheRegionIsAMappingNotTheFallback() {
        assumeLinux();
        try (AnonymousMemory region = AnonymousMemory.tryMap(REGION, REGION, false)) {
            assertThat(region).isNotNull();
        }
        assertThat(AnonymousMemory.tryMapUntilUnreachable(REGION, REGION, true)).isNotNull()
                .satisfies(segment -> assertThat(segment.address() % REGION).isZero());
    }

    @Test
    void badSizesAndAlignmentsAreRefused() {
        assertThatThrownBy(() -> AnonymousMemory.tryMap(0, 4096, false)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AnonymousMemory.tryMap(4096, 3000, false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AnonymousMemory.tryMapUntilUnreachable(-1, 4096, false))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static void assumeLinux() {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT).contains("linux"),
                "anonymous mappings are made on Linux only");
    }
}
