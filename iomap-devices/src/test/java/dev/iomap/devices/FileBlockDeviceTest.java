package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceBusyException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/** The contract on a file device through the page cache; then what only the file device does. */
class FileBlockDeviceTest extends BlockDeviceContractTest {
    @TempDir
    Path dir;

    @Override
    protected BlockDevice open(int blockSize, long capacity) throws IOException {
        return FileBlockDevice.open(dir.resolve("device"), blockSize, capacity, false);
    }

    /**
     * The host's ENOSPC, however it is worded (the JDK's C library message, or the gathering writer's errno
     * name), is told apart from other I/O errors: it becomes a {@code DeviceNoSpaceException} (HostFullTest
     * in iomap-cli fills a real tmpfs).
     */
    @Test
    void theHostsEnospcIsToldApartFromOtherErrors() {
        assertThat(FileBlockDevice.isHostNoSpace(new IOException("No space left on device"))).isTrue();
        assertThat(FileBlockDevice.isHostNoSpace(new IOException("pwritev of 4096 bytes at 0 to /x failed: "
                + VectoredWrites.describe(28)))).isTrue();
        assertThat(FileBlockDevice.isHostNoSpace(new IOException("Input/output error"))).isFalse();
        assertThat(FileBlockDevice.isHostNoSpace(new IOException("pwritev failed: " + VectoredWrites.describe(5))))
                .isFalse();
        assertThat(FileBlockDevice.isHostNoSpace(new IOException((String) null))).isFalse();
    }

    @Test
    void createsTheFileAtItsCapacity() throws IOException {
        assertThat(Files.size(dir.resolve("device"))).isEqualTo(CAPACITY);
    }

    @Test
    void extendsAShorterFileAndKeepsItsData() throws Exception {
        Path path = dir.resolve("short");
        byte[] data = randomBytes(BLOCK);
        Files.write(path, data);

        try (var extended = FileBlockDevice.open(path, BLOCK, 4L * BLOCK, false)) {
            assertThat(Files.size(path)).isEqualTo(4L * BLOCK);
            ByteBuffer back = ByteBuffer.allocate(4 * BLOCK);
            extended.read(0, back);
            byte[] expected = new byte[4 * BLOCK];
            System.arraycopy(data, 0, expected, 0, BLOCK);
            assertThat(back.array()).isEqualTo(expected);
        }
    }

    @Test
    void aSecondOpenOfTheSameFileIsRefusedUntilTheFirstCloses() throws Exception {
        Path path = dir.resolve("device");
        byte[] before = Files.readAllBytes(path);
        device.flush();

        assertThatThrownBy(() -> FileBlockDevice.open(path, BLOCK, false))
                .isInstanceOf(DeviceBusyException.class)
                .hasMessageContaining(path + " is in use");
        assertThatThrownBy(() -> FileBlockDevice.open(path, BLOCK, 2 * CAPACITY, false))
                .isInstanceOf(DeviceBusyException.class);
        assertThat(Files.size(path)).as("a refused open does not extend the file").isEqualTo(CAPACITY);
        assertThat(Files.readAllBytes(path)).isEqualTo(before);

        device.close();
        try (var reopened = FileBlockDevice.open(path, BLOCK, false)) {
            assertThat(reopened.capacity()).isEqualTo(CAPACITY);
        }
    }

    @Test
    void reopeningSeesWhatWasFlushed() throws Exception {
        byte[] data = randomBytes(3 * BLOCK);
        await(device.write(7L * BLOCK, ByteBuffer.wrap(data), IoPurpose.METADATA));
        device.flush();
        device.close();

        try (var reopened = FileBlockDevice.open(dir.resolve("device"), BLOCK, false)) {
            assertThat(reopened.capacity()).isEqualTo(CAPACITY);
            ByteBuffer back = ByteBuffer.allocate(data.length);
            reopened.read(7L * BLOCK, back);
            assertThat(back.array()).isEqualTo(data);
            assertThat(reopened.stats()).isEqualTo(new DeviceStats(3L * BLOCK, 1, 0, 0, 0, 0, 0));
        }
    }

    @Test
    void refusesToOpenAFileThatIsNotWholeBlocks() throws IOException {
        Path ragged = Files.write(dir.resolve("ragged"), new byte[BLOCK + 100]);
        Path empty = Files.createFile(dir.resolve("empty"));

        assertThatThrownBy(() -> FileBlockDevice.open(ragged, BLOCK, false))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("file " + ragged
                        + " is 4196 bytes long, not a positive multiple of the block size 4096");
        assertThatThrownBy(() -> FileBlockDevice.open(empty, BLOCK, false))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("file " + empty
                        + " is 0 bytes long, not a positive multiple of the block size 4096");
        assertThatThrownBy(() -> FileBlockDevice.open(dir.resolve("missing"), BLOCK, false))
                .isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void refusesABadGeometry() {
        Path path = dir.resolve("other");
        assertThatThrownBy(() -> FileBlockDevice.open(path, 3000, 3000L * 4, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("block size 3000 is not a power of two of at least 512");
        assertThatThrownBy(() -> FileBlockDevice.open(path, BLOCK, BLOCK + 512L, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capacity 4608 is not a positive multiple of the block size 4096");
        assertThatThrownBy(() -> FileBlockDevice.open(path, 256, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("block size 256 is not a power of two of at least 512");
        assertThat(path).doesNotExist();
    }

    @Test
    void writesRunOnTheDevicesOwnDaemonThreads() throws Exception {
        await(device.write(0, ByteBuffer.allocate(BLOCK), IoPurpose.DATA));

        assertThat(Thread.getAllStackTraces().keySet())
                .filteredOn(thread -> thread.getName().matches("iomap-file-io-\\d+"))
                .isNotEmpty()
                .allMatch(Thread::isDaemon);
    }

    @Test
    void closeFromACompletionCallbackIsRefusedInsteadOfDeadlocking() throws Exception {
        Throwable closeFailure = onAWriteThread(() -> {
            try {
                device.close();
                return new AssertionError("close() returned normally on a write thread");
            } catch (Throwable e) {
                return e;
            }
        });

        assertThat(closeFailure)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("called on its own write thread");
        device.flush();
        assertThat(device.stats().flushes()).isEqualTo(1);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void readFlushAndDiscardFromACompletionCallbackDoNotDeadlock() throws Exception {
        byte[] data = randomBytes(BLOCK);
        await(device.write(BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA));
        await(device.write(2L * BLOCK, ByteBuffer.wrap(randomBytes(BLOCK)), IoPurpose.DATA));

        byte[] read = onAWriteThread(() -> {
            try {
                device.flush();
                device.discard(2L * BLOCK, BLOCK);
                return readBytes(BLOCK, BLOCK);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });

        assertThat(read).isEqualTo(data);
        assertThat(readBytes(2L * BLOCK, BLOCK)).containsOnly(0);
        assertThat(device.stats().flushes()).isEqualTo(1);
    }

    /**
     * Runs {@code action} in a completion callback on one of the device's write threads. A callback
     * attached after the write completed runs in the attaching thread instead, so this writes until
     * one completes late enough (almost always the first).
     */
    private <T> T onAWriteThread(Supplier<T> action) throws Exception {
        for (int attempt = 0; attempt < 1000; attempt++) {
            Optional<T> result = device.write(0, ByteBuffer.allocate(BLOCK), IoPurpose.DATA)
                    .thenApply(ignored -> Thread.currentThread().getName().startsWith("iomap-file-io-")
                            ? Optional.ofNullable(action.get())
                            : Optional.<T>empty())
                    .get(10, TimeUnit.SECONDS);
            if (result.isPresent()) {
                return result.get();
            }
        }
        throw new AssertionError("no write completed after its callback was attached");
    }

    @Test
    void closeWaitsForQueuedWrites() throws Exception {
        byte[] data = randomBytes((int) CAPACITY);
        for (int b = 0; b < BLOCKS; b++) {
            device.write((long) b * BLOCK, ByteBuffer.wrap(data, b * BLOCK, BLOCK), IoPurpose.DATA);
        }
        device.close();

        assertThat(Files.readAllBytes(dir.resolve("device"))).isEqualTo(data);
    }
}
