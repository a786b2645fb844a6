package dev.iomap.core;

import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.device.IoPurpose;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.spi.WritebackOps;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Writeback over a device that completes writes on its own threads. */
class AsyncCompletionTest {
    private static final int K4 = 4096;

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void completionWorkMayDoDeviceIoWithoutStarvingTheDeviceThreads(@TempDir Path dir) throws Exception {
        try (FileBlockDevice device = FileBlockDevice.open(dir.resolve("dev.img"), K4, 64L << 20, false)) {
            Set<Long> logged = ConcurrentHashMap.newKeySet();
            MapBlocksWriteback writeback = new MapBlocksWriteback() {
                @Override
                public Iomap mapBlocks(IomapInode inode, long pos, long length) {
                    return Iomap.mapped(pos, length, pos);
                }

                @Override
                public void ioendCompleted(IomapInode inode, IoendCompletion completion) {
                    // A journaling adapter logs the completion synchronously: a metadata write.
                    long logBlock = (32L << 20) + completion.offset();
                    device.write(logBlock, ByteBuffer.allocateDirect(K4), IoPurpose.METADATA).join();
                    logged.add(completion.offset());
                }
            };
            IomapCache cache = new IomapCache(PageCacheOptions.builder().maxIoendBytes(K4).build(), device);
            // A preallocated file as large as its area: every write below is an overwrite.
            OpenFile file = cache.addInode(1, K4, 32L << 20, 32L << 20, new BlockDeviceMapping(device), writeback)
                    .open();

            for (int i = 0; i < 64; i++) {
                file.write((long) i * 2 * K4, buffer(i, (long) i * 2 * K4, K4));
            }
            file.fsync();

            assertThat(logged).hasSize(64);
            assertThat(device.stats().metadataBytesWritten()).isEqualTo(64L * K4);
            for (int i = 0; i < 64; i++) {
                assertThat(readDevice(device, (long) i * 2 * K4, K4)).isEqualTo(pattern(i, (long) i * 2 * K4, K4));
            }
            cache.close();
        }
    }

    /**
     * An ioend the adapter says needs no completion work ends writeback on the device's thread without
     * {@code ioendCompleted}; every other one still gets it (xfs's {@code xfs_ioend_needs_wq_completion}).
     */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void anIoendThatNeedsNoCompletionWorkSkipsIoendCompleted() throws Exception {
        ExecutorService deviceThread = Executors.newSingleThreadExecutor();
        try (RamBlockDevice ram = new RamBlockDevice(K4, 64L << 20)) {
            // completes every write later, on its own thread, as a real device does
            BlockDevice device = new ForwardingBlockDevice(ram) {
                @Override
                public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
                    List<ByteBuffer> data = srcs.stream().map(ByteBuffer::duplicate).toList();
                    return CompletableFuture.runAsync(() -> delegate.write(offset, data, purpose).join(),
                            deviceThread);
                }
            };
            Set<Long> asked = ConcurrentHashMap.newKeySet();
            Set<Long> completed = ConcurrentHashMap.newKeySet();
            MapBlocksWriteback writeback = new MapBlocksWriteback() {
                @Override
                public Iomap mapBlocks(IomapInode inode, long pos, long length) {
                    return Iomap.mapped(pos, length, pos);
                }

                @Override
                public boolean completesWithoutWork(IomapInode inode, IoendCompletion completion) {
                    asked.add(completion.offset());
                    return completion.offset() % (4 * K4) == 0;
                }

                @Override
                public void ioendCompleted(IomapInode inode, IoendCompletion completion) {
                    completed.add(completion.offset());
                }
            };
            IomapCache cache = new IomapCache(PageCacheOptions.builder().maxIoendBytes(K4).build(), device);
            OpenFile file = cache.addInode(1, K4, 32L << 20, 32L << 20, new BlockDeviceMapping(device), writeback)
                    .open();

            for (int i = 0; i < 16; i++) {
                file.write((long) i * 2 * K4, buffer(i, (long) i * 2 * K4, K4));
            }
            file.fsync();

            Set<Long> written = new java.util.TreeSet<>();
            for (int i = 0; i < 16; i++) {
                written.add((long) i * 2 * K4);
                assertThat(readDevice(ram, (long) i * 2 * K4, K4)).isEqualTo(pattern(i, (long) i * 2 * K4, K4));
            }
            assertThat(asked).containsExactlyInAnyOrderElementsOf(written);
            assertThat(completed).containsExactlyInAnyOrderElementsOf(
                    written.stream().filter(offset -> offset % (4 * K4) != 0).toList());
            cache.close();
        } finally {
            deviceThread.shutdownNow();
        }
    }
}
