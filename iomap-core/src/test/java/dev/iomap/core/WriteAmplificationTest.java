package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IoStats;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The seeds' experiment, exactly: 4 KiB random overwrites of a preallocated, pre-read file on 64 KiB
 * pages with fdatasync after every write.
 */
class WriteAmplificationTest {
    private static final int FILE_SIZE = 8 << 20;
    private static final int WRITES = 500;

    private static IoStats run(boolean perBlockDirty) throws Exception {
        RamBlockDevice device = new RamBlockDevice(4096, FILE_SIZE);
        IomapCache cache = new IomapCache(PageCacheOptions.builder().pageSize(65536).maxFolioOrder(0)
                .perBlockDirty(perBlockDirty).build(), device);
        OpenFile file = cache.openBlockDevice();
        ByteBuffer all = ByteBuffer.allocate(FILE_SIZE);
        file.read(0, all);
        Random random = new Random(42);
        byte[] block = new byte[4096];
        for (int i = 0; i < WRITES; i++) {
            random.nextBytes(block);
            long offset = (long) random.nextInt(FILE_SIZE / 4096) * 4096;
            file.write(offset, ByteBuffer.wrap(block));
            file.fdatasync();
        }
        return cache.stats();
    }

    @Test
    void perBlockDirtyWritesExactlyWhatTheApplicationWrote() throws Exception {
        IoStats stats = run(true);

        assertThat(stats.appBytesWritten()).isEqualTo(WRITES * 4096L);
        assertThat(stats.device().bytesWritten()).isEqualTo(WRITES * 4096L);
        assertThat(stats.writeAmplification()).isEqualTo(1.0);
    }

    @Test
    void withoutPerBlockDirtyEveryFourKibWriteCostsSixtyFourKib() throws Exception {
        IoStats stats = run(false);

        assertThat(stats.appBytesWritten()).isEqualTo(WRITES * 4096L);
        assertThat(stats.device().bytesWritten()).isEqualTo(16 * WRITES * 4096L);
        assertThat(stats.writeAmplification()).isEqualTo(16.0);
    }
}
