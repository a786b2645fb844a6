package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * What every {@link BlockDevice} in the core must do. A subclass says how to open a device; the
 * geometry is {@link #BLOCK}-byte blocks, {@link #BLOCKS} of them.
 */
abstract class BlockDeviceContractTest {
    static final int BLOCK = 4096;
    static final int BLOCKS = 64;
    static final long CAPACITY = (long) BLOCK * BLOCKS;
    static final long SEED = Long.getLong("iomap.test.seed", 0);
    /** Reads of one block each by a thread interrupted all along. */
    static final int INTERRUPTED_READS = 2000;

    protected BlockDevice device;
    protected final Random random = new Random(SEED);

    /**
     * @return a new, zero-filled device of {@code capacity} bytes in {@code blockSize} blocks
     */
    protected abstract BlockDevice open(int blockSize, long capacity) throws IOException;

    @BeforeEach
    void openDevice() throws IOException {
        device = open(BLOCK, CAPACITY);
    }

    @AfterEach
    void closeDevice() throws IOException {
        if (device != null) {
            device.close();
        }
    }

    @Test
    void reportsItsGeometry() {
        assertThat(device.blockSize()).isEqualTo(BLOCK);
        assertThat(device.capacity()).isEqualTo(CAPACITY);
    }

    @Test
    void startsZeroFilled() throws IOException {
        assertThat(readBytes(0, (int) CAPACITY)).containsOnly(0);
    }

    @Test
    void readsBackWhatWasWritten() throws Exception {
        byte[] data = randomBytes(3 * BLOCK);
        await(device.write(5L * BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA));

        assertThat(readBytes(5L * BLOCK, data.length)).isEqualTo(data);
        assertThat(readBytes(4L * BLOCK, BLOCK)).containsOnly(0);
        assertThat(readBytes(8L * BLOCK, BLOCK)).containsOnly(0);
    }

    @Test
    void readsBackTheWholeDevice() throws Exception {
        byte[] data = randomBytes((int) CAPACITY);
        await(device.write(0, ByteBuffer.wrap(data), IoPurpose.DATA));

        assertThat(readBytes(0, data.length)).isEqualTo(data);
    }

    @Test
    void gatherWriteLaysBuffersOneAfterTheOther() throws Exception {
        byte[] data = randomBytes(3 * BLOCK);
        ByteBuffer direct = ByteBuffer.allocateDirect(5000);
        direct.put(data, 1000, 5000).flip();
        List<ByteBuffer> srcs = List.of(
                ByteBuffer.wrap(data, 0, 1000),
                direct,
                ByteBuffer.wrap(data, 6000, data.length - 6000).slice());

        await(device.write(2L * BLOCK, srcs, IoPurpose.DATA));

        assertThat(readBytes(2L * BLOCK, data.length)).isEqualTo(data);
    }

    @Test
    void writeLeavesTheSourcePositionsAndReadFillsTheDestination() throws Exception {
        ByteBuffer src = ByteBuffer.wrap(randomBytes(2 * BLOCK));
        await(device.write(0, src, IoPurpose.DATA));
        assertThat(src.position()).isZero();
        assertThat(src.limit()).isEqualTo(2 * BLOCK);

        ByteBuffer dst = ByteBuffer.allocate(3 * BLOCK).position(BLOCK);
        device.read(0, dst);
        assertThat(dst.position()).isEqualTo(3 * BLOCK);
        assertThat(dst.array()).startsWith(new byte[BLOCK]);
        assertThat(Arrays.copyOfRange(dst.array(), BLOCK, 3 * BLOCK))
                .isEqualTo(src.array());
    }

    @Test
    void rejectsAnUnalignedOffset() {
        long offset = BLOCK + 512;
        assertThatThrownBy(() -> device.read(offset, ByteBuffer.allocate(BLOCK)))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("read: offset 4608 is not a multiple of the block size 4096");
        assertThat(failureOf(device.write(offset, ByteBuffer.allocate(BLOCK), IoPurpose.DATA)))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("write: offset 4608 is not a multiple of the block size 4096");
        assertThatThrownBy(() -> device.discard(offset, BLOCK))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("discard: offset 4608 is not a multiple of the block size 4096");
        assertThat(device.stats()).isEqualTo(DeviceStats.ZERO);
    }

    @Test
    void rejectsAnUnalignedLength() {
        assertThatThrownBy(() -> device.read(BLOCK, ByteBuffer.allocate(BLOCK + 1)))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("read: length 4097 is not a multiple of the block size 4096");
        List<ByteBuffer> srcs = List.of(ByteBuffer.allocate(BLOCK), ByteBuffer.allocate(100));
        assertThat(failureOf(device.write(BLOCK, srcs, IoPurpose.DATA)))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("write: length 4196 is not a multiple of the block size 4096");
        assertThatThrownBy(() -> device.discard(BLOCK, 512))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("discard: length 512 is not a multiple of the block size 4096");
        assertThat(device.stats()).isEqualTo(DeviceStats.ZERO);
    }

    @Test
    void rejectsARangePastTheEnd() {
        long lastBlock = CAPACITY - BLOCK;
        assertThatThrownBy(() -> device.read(lastBlock, ByteBuffer.allocate(2 * BLOCK)))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("read: range [258048, +8192) ends past the device capacity 262144");
        assertThat(failureOf(device.write(CAPACITY, ByteBuffer.allocate(BLOCK), IoPurpose.DATA)))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("write: range [262144, +4096) ends past the device capacity 262144");
        assertThatThrownBy(() -> device.discard(0, CAPACITY + BLOCK))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("discard: range [0, +266240) ends past the device capacity 262144");
        assertThat(device.stats()).isEqualTo(DeviceStats.ZERO);
    }

    @Test
    void rejectsANegativeOffsetOrLength() {
        assertThatThrownBy(() -> device.read(-BLOCK, ByteBuffer.allocate(BLOCK)))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("read: negative offset -4096");
        assertThat(failureOf(device.write(-BLOCK, ByteBuffer.allocate(BLOCK), IoPurpose.METADATA)))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("write: negative offset -4096");
        assertThatThrownBy(() -> device.discard(0, -BLOCK))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("discard: negative length -4096");
        assertThat(device.stats()).isEqualTo(DeviceStats.ZERO);
    }

    @Test
    void rejectsARangeThatOverflows() {
        long lastAligned = Long.MAX_VALUE / BLOCK * BLOCK;
        assertThatThrownBy(() -> device.read(lastAligned, ByteBuffer.allocate(2 * BLOCK)))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessageContaining("read: range [" + lastAligned + ", +8192)");
        assertThatThrownBy(() -> device.discard(BLOCK, lastAligned))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessageContaining("discard: range [4096, +" + lastAligned + ")");
    }

    @Test
    void rejectsAReadOnlyDestination() {
        ByteBuffer readOnly = ByteBuffer.allocate(BLOCK).asReadOnlyBuffer();
        assertThatThrownBy(() -> device.read(0, readOnly))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("read: the destination buffer is read-only");
    }

    @Test
    void rejectsANullPurposeInTheFuture() {
        assertThat(failureOf(device.write(0, ByteBuffer.allocate(BLOCK), null)))
                .isInstanceOf(NullPointerException.class);
        assertThat(device.stats()).isEqualTo(DeviceStats.ZERO);
    }

    @Test
    void acceptsAnEmptyRequestAtTheEnd() throws Exception {
        device.read(CAPACITY, ByteBuffer.allocate(0));
        await(device.write(CAPACITY, List.of(), IoPurpose.DATA));
        device.discard(CAPACITY, 0);

        assertThat(device.stats()).isEqualTo(new DeviceStats(0, 1, 0, 0, 1, 0, 0));
    }

    @Test
    void countsExactly() throws Exception {
        assertThat(device.stats()).isEqualTo(DeviceStats.ZERO);

        await(device.write(0, ByteBuffer.allocate(3 * BLOCK), IoPurpose.DATA));
        List<ByteBuffer> metadata = List.of(ByteBuffer.allocate(BLOCK / 2),
                ByteBuffer.allocate(BLOCK / 2));
        await(device.write(10L * BLOCK, metadata, IoPurpose.METADATA));
        device.read(0, ByteBuffer.allocate(2 * BLOCK));
        device.read(BLOCK, ByteBuffer.allocate(BLOCK));
        device.flush();
        device.flush();
        device.discard(20L * BLOCK, 4L * BLOCK);
        DeviceStats afterFirstRound = device.stats();

        assertThat(afterFirstRound).isEqualTo(new DeviceStats(
                3L * BLOCK, 2, 3L * BLOCK, BLOCK, 2, 2, 4L * BLOCK));
        assertThat(afterFirstRound.bytesWritten()).isEqualTo(4L * BLOCK);

        await(device.write(0, ByteBuffer.allocate(BLOCK), IoPurpose.METADATA));
        assertThat(device.stats().minus(afterFirstRound))
                .isEqualTo(new DeviceStats(0, 0, 0, BLOCK, 1, 0, 0));
    }

    @Test
    void discardZeroesTheRange() throws Exception {
        byte[] data = randomBytes(6 * BLOCK);
        await(device.write(0, ByteBuffer.wrap(data), IoPurpose.DATA));

        device.discard(2L * BLOCK, 3L * BLOCK);

        byte[] expected = data.clone();
        Arrays.fill(expected, 2 * BLOCK, 5 * BLOCK, (byte) 0);
        assertThat(readBytes(0, data.length)).isEqualTo(expected);
        assertThat(device.stats().discardedBytes()).isEqualTo(3L * BLOCK);
        assertThat(device.stats().bytesWritten()).isEqualTo(6L * BLOCK);
    }

    @Test
    void everyOperationFailsAfterClose() throws Exception {
        await(device.write(0, ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
        device.close();

        assertThatThrownBy(() -> device.read(0, ByteBuffer.allocate(BLOCK)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("closed");
        assertThat(failureOf(device.write(0, ByteBuffer.allocate(BLOCK), IoPurpose.DATA)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(device::flush).isInstanceOf(IOException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> device.discard(0, BLOCK))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("closed");

        device.close();
        assertThat(device.stats()).isEqualTo(new DeviceStats(0, 0, BLOCK, 0, 1, 0, 0));
        assertThat(device.capacity()).isEqualTo(CAPACITY);
    }

    @Test
    void readsIntoMemoryConfinedToTheCallingThread() throws Exception {
        byte[] data = randomBytes(2 * BLOCK);
        await(device.write(BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA));

        try (Arena arena = Arena.ofConfined()) {
            ByteBuffer dst = arena.allocate(data.length, BLOCK).asByteBuffer();
            device.read(BLOCK, dst);

            assertThat(dst.position()).isEqualTo(data.length);
            assertThat(dst.flip()).isEqualTo(ByteBuffer.wrap(data));
        }
    }

    /**
     * A caller interrupted before its call, then again and again while it reads, flushes and
     * discards: every call works, keeps the interrupt, and the device still works afterwards.
     */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void interruptedCallersKeepTheirInterruptAndTheDeviceKeepsWorking() throws Exception {
        long lastBlock = CAPACITY - BLOCK;
        byte[] data = randomBytes((int) lastBlock);
        await(device.write(0, ByteBuffer.wrap(data), IoPurpose.DATA));
        await(device.write(lastBlock, ByteBuffer.wrap(randomBytes(BLOCK)), IoPurpose.DATA));
        var calls = new FutureTask<>(() -> {
            Thread.currentThread().interrupt();
            assertThat(readBytes(0, BLOCK)).isEqualTo(Arrays.copyOf(data, BLOCK));
            assertThat(Thread.interrupted()).as("interrupted after the read").isTrue();
            Thread.currentThread().interrupt();
            device.flush();
            assertThat(Thread.interrupted()).as("interrupted after the flush").isTrue();
            Thread.currentThread().interrupt();
            device.discard(lastBlock, BLOCK);
            assertThat(Thread.interrupted()).as("interrupted after the discard").isTrue();

            while (!Thread.currentThread().isInterrupted()) { // until the interrupter has begun
                Thread.onSpinWait();
            }
            int keptInterrupts = 0;
            for (int i = 0; i < INTERRUPTED_READS; i++) {
                int block = i % (BLOCKS - 1);
                assertThat(readBytes((long) block * BLOCK, BLOCK))
                        .isEqualTo(Arrays.copyOfRange(data, block * BLOCK, (block + 1) * BLOCK));
                if (i % 100 == 0) {
                    device.flush();
                    device.discard(lastBlock, BLOCK);
                }
                if (Thread.interrupted()) {
                    keptInterrupts++;
                }
            }
            return keptInterrupts;
        });
        Thread caller = Thread.ofPlatform().name("interrupted-caller").start(calls);
        Thread interrupter = Thread.ofPlatform().name("interrupter").start(() -> {
            while (!calls.isDone()) {
                caller.interrupt();
                LockSupport.parkNanos(20_000);
            }
        });

        int keptInterrupts = calls.get();
        interrupter.join();
        caller.join();

        assertThat(keptInterrupts).isPositive();
        byte[] block3 = randomBytes(BLOCK);
        await(device.write(3L * BLOCK, ByteBuffer.wrap(block3), IoPurpose.DATA));
        device.flush();
        byte[] expected = Arrays.copyOf(data, (int) CAPACITY);
        System.arraycopy(block3, 0, expected, 3 * BLOCK, BLOCK);
        assertThat(readBytes(0, (int) CAPACITY)).isEqualTo(expected);
        DeviceStats stats = device.stats();
        assertThat(stats.reads()).isEqualTo(1 + INTERRUPTED_READS + 1);
        assertThat(stats.flushes()).isEqualTo(1 + INTERRUPTED_READS / 100 + 1);
    }

    @Test
    void concurrentWritersToDisjointRangesAllLand() throws Exception {
        byte[] data = randomBytes((int) CAPACITY);

        writeInterleaved(device, 4, data);

        assertThat(readBytes(0, data.length)).isEqualTo(data);
        DeviceStats stats = device.stats();
        assertThat(stats.writes()).isEqualTo(BLOCKS);
        assertThat(stats.dataBytesWritten()).isEqualTo(CAPACITY);
    }

    /**
     * Writes {@code data} from offset 0 with {@code threads} threads started together, one block per
     * write, thread {@code t} writing blocks {@code t}, {@code t + threads}, ..., and waits for every
     * write to complete.
     */
    static void writeInterleaved(BlockDevice target, int threads, byte[] data) throws Exception {
        int blockSize = target.blockSize();
        int blocks = data.length / blockSize;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            var start = new CountDownLatch(1);
            List<Future<List<CompletableFuture<Void>>>> submitted = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t;
                submitted.add(pool.submit(() -> {
                    start.await();
                    List<CompletableFuture<Void>> writes = new ArrayList<>();
                    for (int b = first; b < blocks; b += threads) {
                        ByteBuffer block = ByteBuffer.wrap(data, b * blockSize, blockSize);
                        writes.add(target.write((long) b * blockSize, block, IoPurpose.DATA));
                    }
                    return writes;
                }));
            }
            start.countDown();
            for (var writes : submitted) {
                for (var write : writes.get(10, TimeUnit.SECONDS)) {
                    await(write);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    protected byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    protected byte[] readBytes(long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        device.read(offset, dst);
        assertThat(dst.hasRemaining()).isFalse();
        return dst.array();
    }

    static void await(CompletableFuture<Void> write) throws Exception {
        write.get(10, TimeUnit.SECONDS);
    }

    /** @return what the future failed with, asserting that it did fail */
    static Throwable failureOf(CompletableFuture<?> write) {
        Throwable thrown = catchThrowable(() -> write.get(10, TimeUnit.SECONDS));
        assertThat(thrown).isInstanceOf(ExecutionException.class);
        return thrown.getCause();
    }
}
