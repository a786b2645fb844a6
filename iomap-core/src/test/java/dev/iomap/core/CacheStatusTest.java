package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.CacheStatus;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** What {@code iomap top} and the metrics show of a cache (issue 41 items 2, 3): gauges and read hits. */
class CacheStatusTest {
    private static final CopySource FILL = (MemorySegment dst, long offset, int length) -> {
        dst.asSlice(offset, length).fill((byte) 1);
        return length;
    };

    @Test
    void dirtyBytesLeaveWithWritebackAndReadsCountFoliosFoundAndFoliosRead() throws Exception {
        RamBlockDevice device = new RamBlockDevice(4096, 1 << 20);
        PageCacheOptions options = PageCacheOptions.builder().pageSize(4096).maxFolioOrder(0)
                .cacheBudgetBytes(1 << 20).build();
        try (IomapCache cache = new IomapCache(options, device)) {
            BlockDeviceMapping mapping = new BlockDeviceMapping(device);
            CachedInode inode = cache.addInode(1, 4096, 0, 1 << 20, mapping, mapping);
            inode.write(0, FILL, 8192);
            assertThat(cache.cacheStatus()).isEqualTo(new CacheStatus(1 << 20, 8192, 8192, 0, 0, 0));

            inode.writeAndWait(0, Long.MAX_VALUE);
            inode.invalidateCache();
            CacheStatus cold = cache.cacheStatus();
            inode.read(0, ByteBuffer.allocate(8192));
            CacheStatus afterMiss = cache.cacheStatus();
            inode.read(0, ByteBuffer.allocate(8192));
            CacheStatus afterHit = cache.cacheStatus();

            assertThat(cold).isEqualTo(new CacheStatus(1 << 20, 0, 0, 0, 0, 0));
            assertThat(afterMiss).isEqualTo(new CacheStatus(1 << 20, 8192, 0, 0, 0, 2));
            assertThat(afterHit).isEqualTo(new CacheStatus(1 << 20, 8192, 0, 0, 2, 2));
            assertThat(afterHit.hitRatioSince(afterMiss)).isEqualTo(1.0);
            assertThat(afterMiss.hitRatioSince(cold)).isEqualTo(0.0);
        }
    }
}
