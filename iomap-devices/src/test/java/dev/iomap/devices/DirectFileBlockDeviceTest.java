package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceBusyException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.api.NotSupportedException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The contract on a file device with {@code O_DIRECT}, then round trips through buffers direct I/O
 * cannot use as they are (heap, misaligned direct, larger than one bounce buffer).
 *
 * <p>The files live under {@code target/}, on the disk the build runs on: {@code @TempDir} may be on
 * a tmpfs, which may refuse {@code O_DIRECT}. Where the filesystem refuses it anyway, every test is
 * skipped with the reason.
 */
class DirectFileBlockDeviceTest extends BlockDeviceContractTest {
    private static Path dir;

    @BeforeAll
    static void createDirectoryOnDisk() throws IOException {
        Path target = Files.createDirectories(Path.of("target", "device-tests").toAbsolutePath());
        dir = Files.createTempDirectory(target, "direct-io-");
    }

    @AfterAll
    static void deleteDirectory() throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    @Override
    protected BlockDevice open(int blockSize, long capacity) throws IOException {
        Path path = Files.createTempFile(dir, "device-", "");
        try {
            return FileBlockDevice.open(path, blockSize, capacity, true);
        } catch (NotSupportedException e) {
            Assumptions.assumeTrue(false, "skipped: the filesystem under " + dir
                    + " refuses O_DIRECT with " + blockSize + "-byte blocks: " + e.getMessage());
            throw e;
        }
    }

    @Test
    void isOpenWithDirectIo() {
        assertThat(((FileBlockDevice) device).directIo()).isTrue();
    }

    @Test
    void heapBuffersAtUnalignedArrayOffsetsRoundTrip() throws Exception {
        byte[] data = randomBytes(2 * BLOCK);
        byte[] shifted = new byte[data.length + 1];
        System.arraycopy(data, 0, shifted, 1, data.length);
        await(device.write(3L * BLOCK, ByteBuffer.wrap(shifted, 1, data.length).slice(),
                IoPurpose.DATA));

        ByteBuffer back = ByteBuffer.allocate(data.length + 3).position(3).slice();
        device.read(3L * BLOCK, back);

        assertThat(back.flip()).isEqualTo(ByteBuffer.wrap(data));
        assertThat(device.stats()).isEqualTo(
                new DeviceStats(2L * BLOCK, 1, 2L * BLOCK, 0, 1, 0, 0));
    }

    @Test
    void misalignedDirectBuffersRoundTrip() throws Exception {
        byte[] data = randomBytes(BLOCK);
        ByteBuffer src = ByteBuffer.allocateDirect(BLOCK + 1).position(1).slice().put(data).flip();
        await(device.write(BLOCK, src, IoPurpose.METADATA));

        ByteBuffer back = ByteBuffer.allocateDirect(BLOCK + 5).position(5).slice();
        device.read(BLOCK, back);

        assertThat(back.flip()).isEqualTo(ByteBuffer.wrap(data));
    }

    @Test
    void alignedDirectBuffersRoundTrip() throws Exception {
        byte[] data = randomBytes(2 * BLOCK);
        // Shared: the device writes on its own threads, which a confined arena's memory refuses.
        try (Arena arena = Arena.ofShared()) {
            ByteBuffer src = arena.allocate(data.length, BLOCK).asByteBuffer().put(data).flip();
            await(device.write(0, src, IoPurpose.DATA));

            ByteBuffer back = arena.allocate(data.length, BLOCK).asByteBuffer();
            device.read(0, back);

            assertThat(back.flip()).isEqualTo(ByteBuffer.wrap(data));
        }
    }

    @Test
    void severalAlignedDirectBuffersGoOutAsOneGatheringWriteAndRoundTrip() throws Exception {
        // an ioend of large folios: aligned direct buffers, written straight from them by one pwritev
        // (VectoredWrites); first less than a bounce buffer, then more
        try (BlockDevice large = open(BLOCK, 8L << 20); Arena arena = Arena.ofShared()) {
            String os = System.getProperty("os.name") + "/" + System.getProperty("os.arch");
            Assumptions.assumeTrue(os.equals("Linux/amd64") || os.equals("Linux/aarch64"),
                    "skipped: gathering direct writes are made on Linux on x86_64 and aarch64 only, not " + os);
            assertThat(((FileBlockDevice) large).gathers()).as("a writable O_DIRECT device on Linux gathers").isTrue();
            long gathered = 0;
            for (int[] sizes : new int[][] {{BLOCK, 3 * BLOCK, BLOCK}, {1 << 20, 128 << 10, 4 * BLOCK}}) {
                int length = java.util.Arrays.stream(sizes).sum();
                byte[] data = randomBytes(length);
                List<ByteBuffer> srcs = new java.util.ArrayList<>();
                int at = 0;
                for (int size : sizes) {
                    srcs.add(arena.allocate(size, BLOCK).asByteBuffer().put(data, at, size).flip());
                    at += size;
                }
                await(large.write(2L * BLOCK, srcs, IoPurpose.DATA));

                ByteBuffer back = arena.allocate(length, BLOCK).asByteBuffer();
                large.read(2L * BLOCK, back);

                assertThat(back.flip()).isEqualTo(ByteBuffer.wrap(data));
                assertThat(srcs).as("the caller's buffers are left as they were").allSatisfy(src -> assertThat(src.position()).isZero());
                assertThat(((FileBlockDevice) large).gatheringWrites()).as("one pwritev per write").isEqualTo(++gathered);
            }
        }
    }

    @Test
    void severalBuffersOfWhichOneIsOnTheHeapGoThroughTheBounceBufferAndRoundTrip() throws Exception {
        try (BlockDevice large = open(BLOCK, 8L << 20); Arena arena = Arena.ofShared()) {
            byte[] data = randomBytes((1 << 20) + 3 * BLOCK);
            List<ByteBuffer> srcs = List.of(
                    arena.allocate(1 << 20, BLOCK).asByteBuffer().put(data, 0, 1 << 20).flip(),
                    ByteBuffer.wrap(data, 1 << 20, BLOCK),
                    arena.allocate(2 * BLOCK, BLOCK).asByteBuffer().put(data, (1 << 20) + BLOCK, 2 * BLOCK).flip());
            await(large.write(BLOCK, srcs, IoPurpose.DATA));

            ByteBuffer back = arena.allocate(data.length, BLOCK).asByteBuffer();
            large.read(BLOCK, back);

            assertThat(back.flip()).isEqualTo(ByteBuffer.wrap(data));
            assertThat(((FileBlockDevice) large).gatheringWrites()).as("copied, not gathered").isZero();
        }
    }

    @Test
    void requestsLargerThanOneBounceBufferRoundTrip() throws Exception {
        int length = 3 << 19; // 1.5 MiB: one full bounce buffer and a half one
        try (BlockDevice large = open(BLOCK, 4L << 20)) {
            byte[] data = randomBytes(length);
            List<ByteBuffer> srcs = List.of(
                    ByteBuffer.wrap(data, 0, 777),
                    ByteBuffer.wrap(data, 777, (1 << 20) - 777 + 3),
                    ByteBuffer.wrap(data, (1 << 20) + 3, length - (1 << 20) - 3));
            await(large.write(BLOCK, srcs, IoPurpose.DATA));

            ByteBuffer back = ByteBuffer.allocate(length);
            large.read(BLOCK, back);

            assertThat(back.array()).isEqualTo(data);
            assertThat(large.stats()).isEqualTo(new DeviceStats(length, 1, length, 0, 1, 0, 0));
        }
    }

    @Test
    void refusesBlocksSmallerThanTheFilesystemsAlignment() throws IOException {
        long alignment = Files.getFileStore(dir).getBlockSize();
        Assumptions.assumeTrue(alignment > 512,
                "skipped: the filesystem under " + dir + " has 512-byte blocks, so any block size works");
        Path path = dir.resolve("small-blocks");

        assertThatThrownBy(() -> FileBlockDevice.open(path, 512, 8192, true))
                .isInstanceOf(NotSupportedException.class)
                .hasMessage("direct I/O on " + path + " needs a block size that is a multiple of the"
                        + " filesystem's " + alignment + "-byte blocks; this device has 512-byte blocks");
    }
    /** The lock is taken on a descriptor of its own beside the O_DIRECT channel: it holds the same. */
    @Test
    void aDirectIoDeviceHoldsItsImageLikeAnyOther() throws Exception {
        Path path = ((FileBlockDevice) device).path();
        assertThatThrownBy(() -> FileBlockDevice.open(path, BLOCK, true).close())
                .isInstanceOf(DeviceBusyException.class).hasMessageContaining(" is in use");
        assertThatThrownBy(() -> FileBlockDevice.openReadOnly(path, BLOCK, false).close())
                .isInstanceOf(DeviceBusyException.class).hasMessageContaining(" is in use");
        device.close();

        try (var reader = FileBlockDevice.openReadOnly(path, BLOCK, true);
                var other = FileBlockDevice.openReadOnly(path, BLOCK, false)) {
            assertThat(reader.directIo() && reader.readOnly() && other.readOnly()).isTrue();
            assertThatThrownBy(() -> FileBlockDevice.open(path, BLOCK, true).close())
                    .isInstanceOf(DeviceBusyException.class).hasMessageContaining(" has it open read-only");
            var write = reader.write(0, ByteBuffer.allocateDirect(BLOCK), IoPurpose.DATA);
            assertThatThrownBy(write::get).cause().isInstanceOf(ReadOnlyDeviceException.class);
        }
    }
}
