package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An {@link OutOfMemoryError} in a thread of a mount shuts the mount down cleanly (issue 35, item 17):
 * met by the flusher (the thread that died in the report: the mount then hung) or by a caller's fsync,
 * the operation and every later one fail with {@link FileSystemShutdownException} (EIO), nothing more
 * reaches the device, closing writes nothing and reports the shutdown, and the next mount replays the
 * journal: what was fsync'd before is there, and fsck is clean.
 */
class OutOfMemoryShutdownTest {
    private static final int BLOCK = 4096;

    @Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    @ParameterizedTest(name = "out of memory in {0}")
    @ValueSource(strings = {"the flusher", "an fsync"})
    void anOutOfMemoryErrorShutsTheMountDownAndLeavesARecoverableImage(String where) throws Exception {
        RamBlockDevice ram = new RamBlockDevice(BLOCK, 64L << 20);
        IomapFileSystems.format("gfs2-like", ram, FormatOptions.blockSize(BLOCK));
        OutOfMemoryDevice device = new OutOfMemoryDevice(ram);
        PageCacheOptions cache = PageCacheOptions.builder().dirtyExpire(Duration.ofMillis(50))
                .writebackInterval(Duration.ofMillis(20)).build();
        // The fsync case without the flusher, so that the error meets the caller's writeback.
        boolean flusher = where.equals("the flusher");
        MountOptions options = new MountOptions(cache, flusher).withAdapterOptions(Map.of("data", "journal"));
        byte[] kept = pattern(1, 5 * BLOCK + 7);
        IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", device, options);
        try {
            try (IomapFile file = fs.create("/kept")) {
                file.write(0, ByteBuffer.wrap(kept));
                file.fsync();
            }
            IomapFile lost = fs.create("/lost");
            device.failNextWrite();
            lost.write(0, ByteBuffer.wrap(pattern(2, 3 * BLOCK)));
            if (!flusher) {
                assertThatThrownBy(lost::fsync).isInstanceOf(FileSystemShutdownException.class)
                        .hasMessageContaining("out of memory");
            } else {
                awaitShutdown(fs);
            }
            assertThat(device.failed()).as("the injected error was thrown").isTrue();
            DeviceStats atShutdown = ram.stats();

            assertThatThrownBy(() -> fs.create("/after")).isInstanceOf(FileSystemShutdownException.class)
                    .hasMessageContaining("gfs2-like mount shut down: out of memory in thread");
            assertThatThrownBy(() -> lost.write(0, ByteBuffer.wrap(new byte[10])))
                    .isInstanceOf(FileSystemShutdownException.class);
            assertThatThrownBy(lost::fsync).isInstanceOf(FileSystemShutdownException.class);
            assertThatThrownBy(fs::sync).isInstanceOf(FileSystemShutdownException.class);
            assertThatThrownBy(fs::close).isInstanceOf(FileSystemShutdownException.class);
            assertThat(ram.stats().writes()).as("device writes after the shutdown").isEqualTo(atShutdown.writes());
            assertThat(ram.stats().flushes()).as("device flushes after the shutdown").isEqualTo(atShutdown.flushes());
        } finally {
            fs.close();
        }

        try (IomapFileSystem again = IomapFileSystems.mount("gfs2-like", ram, MountOptions.defaults())) {
            try (IomapFile file = again.open("/kept")) {
                ByteBuffer back = ByteBuffer.allocate(kept.length);
                file.read(0, back);
                assertThat(back.array()).isEqualTo(kept);
            }
        }
        assertThat(IomapFileSystems.fsck("gfs2-like", ram).problems()).isEmpty();
    }

    /** Waits (at most a minute) until an operation of {@code fs} fails with the shutdown. */
    private static void awaitShutdown(IomapFileSystem fs) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                fs.statfs();
            } catch (FileSystemShutdownException e) {
                assertThat(e).hasMessageContaining("out of memory in thread iomap-flusher");
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the mount did not shut down within a minute of the flusher's OutOfMemoryError");
    }

    private static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (seed * 31 + i * 7 + (i >> 12));
        }
        return bytes;
    }

    /** A device whose next write, once armed, throws {@link OutOfMemoryError} instead of writing. */
    private static final class OutOfMemoryDevice extends ForwardingBlockDevice {
        private final AtomicBoolean armed = new AtomicBoolean();
        private final AtomicBoolean failed = new AtomicBoolean();

        OutOfMemoryDevice(BlockDevice below) {
            super(below);
        }

        void failNextWrite() {
            armed.set(true);
        }

        boolean failed() {
            return failed.get();
        }

        @Override
        public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
            if (armed.compareAndSet(true, false)) {
                failed.set(true);
                throw new OutOfMemoryError("Java heap space (injected at a write of " + purpose + ")");
            }
            return super.write(offset, srcs, purpose);
        }
    }
}
