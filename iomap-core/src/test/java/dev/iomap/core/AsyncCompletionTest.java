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
import dev.iomap.devices.FileBlockDevice;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
            WritebackOps writeback = new WritebackOps() {
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
}
