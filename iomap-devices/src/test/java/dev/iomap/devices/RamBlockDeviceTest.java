package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The contract on a RAM device with chunks of two blocks, so that every multi-block request crosses a
 * chunk boundary; then what only the RAM device does.
 */
class RamBlockDeviceTest extends BlockDeviceContractTest {
    static final long SMALL_CHUNK = 2L * BLOCK;

    @Override
    protected BlockDevice open(int blockSize, long capacity) {
        return new RamBlockDevice(blockSize, capacity, SMALL_CHUNK);
    }

    @Test
    void oneBufferSpanningThreeChunksReadsBack() throws Exception {
        // Blocks 1..5: the second half of chunk 0, all of chunks 1 and 2.
        byte[] data = randomBytes(5 * BLOCK);
        await(device.write(BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA));

        assertThat(readBytes(BLOCK, data.length)).isEqualTo(data);
        assertThat(readBytes(3L * BLOCK, 2 * BLOCK))
                .isEqualTo(Arrays.copyOfRange(data, 2 * BLOCK, 4 * BLOCK));
        assertThat(readBytes(0, BLOCK)).containsOnly(0);
        assertThat(readBytes(6L * BLOCK, BLOCK)).containsOnly(0);
    }

    @Test
    void gatherBuffersSplitAcrossChunksReadBack() throws Exception {
        byte[] data = randomBytes(4 * BLOCK);
        List<ByteBuffer> srcs = List.of(
                ByteBuffer.wrap(data, 0, 3 * BLOCK - 7),
                ByteBuffer.wrap(data, 3 * BLOCK - 7, BLOCK + 7));

        await(device.write(3L * BLOCK, srcs, IoPurpose.METADATA));

        assertThat(readBytes(3L * BLOCK, data.length)).isEqualTo(data);
        assertThat(device.stats().metadataBytesWritten()).isEqualTo(4L * BLOCK);
    }

    @Test
    void discardAcrossChunksIncludingOneNeverWritten() throws Exception {
        byte[] data = randomBytes(2 * BLOCK);
        await(device.write(BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA));

        device.discard(2L * BLOCK, 6L * BLOCK);

        assertThat(readBytes(BLOCK, BLOCK)).isEqualTo(Arrays.copyOf(data, BLOCK));
        assertThat(readBytes(2L * BLOCK, 6 * BLOCK)).containsOnly(0);
    }

    @Test
    void threadsRacingToAllocateOneChunkAllLand() throws Exception {
        for (int round = 0; round < 20; round++) {
            try (var fresh = new RamBlockDevice(512, 4 * 512, 4 * 512)) {
                byte[] data = randomBytes(4 * 512);

                writeInterleaved(fresh, 4, data);

                ByteBuffer back = ByteBuffer.allocate(data.length);
                fresh.read(0, back);
                assertThat(back.array()).as("round %d", round).isEqualTo(data);
            }
        }
    }

    @Test
    void writeIsCompleteWhenItReturns() {
        CompletableFuture<Void> ok = device.write(0, ByteBuffer.allocate(BLOCK), IoPurpose.DATA);
        CompletableFuture<Void> bad = device.write(1, ByteBuffer.allocate(BLOCK), IoPurpose.DATA);

        assertThat(ok).isCompleted();
        assertThat(bad).isCompletedExceptionally();
    }

    @Test
    void capacityOverTwoGibibytesWithTheDefaultChunks() throws Exception {
        long capacity = 8L << 30;
        long offset = (6L << 30) - BLOCK;
        try (var big = new RamBlockDevice(BLOCK, capacity)) {
            byte[] data = randomBytes(2 * BLOCK);
            big.write(offset, ByteBuffer.wrap(data), IoPurpose.DATA).get();

            ByteBuffer back = ByteBuffer.allocate(4 * BLOCK);
            big.read(offset - BLOCK, back);
            byte[] expected = new byte[4 * BLOCK];
            System.arraycopy(data, 0, expected, BLOCK, data.length);
            assertThat(back.array()).isEqualTo(expected);

            ByteBuffer last = ByteBuffer.allocate(BLOCK);
            big.read(capacity - BLOCK, last);
            assertThat(last.array()).containsOnly(0);
            assertThat(big.stats()).isEqualTo(
                    new DeviceStats(5L * BLOCK, 2, 2L * BLOCK, 0, 1, 0, 0));
        }
    }

    @Test
    void aCapacityThatIsNotAWholeNumberOfChunksWorksToTheEnd() throws Exception {
        try (var odd = new RamBlockDevice(512, 5 * 512, 2048)) {
            byte[] data = randomBytes(2 * 512);
            odd.write(3 * 512, ByteBuffer.wrap(data), IoPurpose.DATA).get();

            ByteBuffer back = ByteBuffer.allocate(2 * 512);
            odd.read(3 * 512, back);
            assertThat(back.array()).isEqualTo(data);
        }
    }

    @Test
    void peekAndPokeTakeAnyRangeInsideTheDeviceAndWorkAfterClose() throws Exception {
        var ram = new RamBlockDevice(512, 4 * 512, 1024);
        ram.close();

        ram.poke(1020, new byte[] {9, 1, 2, 3, 4, 5, 6, 9}, 1, 6);

        assertThat(ram.isClosed()).isTrue();
        assertThat(ram.peek(1019, 8)).as("across a chunk boundary").containsExactly(0, 1, 2, 3, 4, 5, 6, 0);
        assertThat(ram.stats()).isEqualTo(new DeviceStats(0, 0, 0, 0, 0, 0, 0));
        assertThatThrownBy(() -> ram.peek(4 * 512 - 1, 2)).isInstanceOf(DeviceRangeException.class);
        assertThatThrownBy(() -> ram.peek(-1, 1)).isInstanceOf(DeviceRangeException.class);
        assertThatThrownBy(() -> ram.poke(4 * 512, new byte[1], 0, 1)).isInstanceOf(DeviceRangeException.class);
        assertThatThrownBy(() -> ram.poke(0, new byte[1], 0, 2)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void aCopyIsAnIndependentOpenImageWithItsOwnCounters() throws Exception {
        var ram = new RamBlockDevice(512, 8 * 512, 1024);
        byte[] data = randomBytes(3 * 512);
        await(ram.write(512, ByteBuffer.wrap(data), IoPurpose.DATA));
        ram.close();

        RamBlockDevice copy = ram.copy();
        await(copy.write(0, ByteBuffer.wrap(randomBytes(2 * 512)), IoPurpose.DATA));

        assertThat(copy.isClosed()).isFalse();
        assertThat(copy.peek(1024, 1024)).isEqualTo(Arrays.copyOfRange(data, 512, 3 * 512));
        assertThat(copy.stats().writes()).isEqualTo(1);
        assertThat(ram.peek(0, 512)).as("the original is unchanged").containsOnly(0);
        assertThat(ram.peek(512, data.length)).isEqualTo(data);
    }

    @Test
    void rejectsABadGeometry() {
        assertThatThrownBy(() -> new RamBlockDevice(1000, 64_000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("block size 1000 is not a power of two of at least 512");
        assertThatThrownBy(() -> new RamBlockDevice(256, 4096))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("block size 256 is not a power of two of at least 512");
        assertThatThrownBy(() -> new RamBlockDevice(BLOCK, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capacity 0 is not a positive multiple of the block size 4096");
        assertThatThrownBy(() -> new RamBlockDevice(BLOCK, BLOCK + 512))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capacity 4608 is not a positive multiple of the block size 4096");
        assertThatThrownBy(() -> new RamBlockDevice(BLOCK, CAPACITY, 3 * BLOCK))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("chunk size 12288 is not a power of two of at least the block size 4096");
        assertThatThrownBy(() -> new RamBlockDevice(BLOCK, CAPACITY, BLOCK / 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("chunk size 2048 is not a power of two of at least the block size 4096");
    }
}
