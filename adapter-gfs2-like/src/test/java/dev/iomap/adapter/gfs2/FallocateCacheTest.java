package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IoStats;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * gfs2-like's fallocate allocates and zeroes on the device (there is no unwritten state); the core's
 * size change after it must not zero the same range again through the cache (a cache that did would
 * hold 16 MiB of dirty large folios after a 16 MiB fallocate, and the seed's E1 job would write 149 bytes
 * per byte instead of 16).
 */
class FallocateCacheTest {
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 64;

    @Test
    void fallocateThatGrowsAFileZeroesItsBlocksOnceOnTheDeviceAndCachesNothing() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, FormatOptions.blockSize(BLOCK));
        PageCacheOptions cache = PageCacheOptions.builder().pageSize(BLOCK).build();
        try (IomapFileSystem fs = IomapFileSystems.mount(Gfs2LikeAdapter.NAME, device, new MountOptions(cache, false))) {
            IomapFile file = fs.create("/f");
            byte[] head = new byte[100];
            Arrays.fill(head, (byte) 0x5a);
            file.write(0, ByteBuffer.wrap(head));
            file.fsync();
            IoStats before = fs.stats();

            file.fallocate(FallocateMode.ALLOCATE, 0, (long) BLOCKS * BLOCK, false);
            file.fsync();
            IoStats after = fs.stats();

            assertThat(file.size()).isEqualTo((long) BLOCKS * BLOCK);
            assertThat(sum(after.foliosByOrder()) - sum(before.foliosByOrder()))
                    .as("folios the fallocate created").isZero();
            // The 100 bytes were stuffed: unstuffing writes them to a new block 0; the adapter zeroes the
            // 63 other new blocks; the cache zeroes the old last block's tail past the old size and writes
            // it back once; none of the 63 zeroed blocks is written again through the cache.
            assertThat(after.device().dataBytesWritten() - before.device().dataBytesWritten())
                    .as("data bytes written by fallocate and fsync").isEqualTo((BLOCKS + 1L) * BLOCK);
            fs.dropCleanCache();
            ByteBuffer all = ByteBuffer.allocate(BLOCKS * BLOCK);
            file.read(0, all);
            byte[] expected = new byte[BLOCKS * BLOCK];
            System.arraycopy(head, 0, expected, 0, head.length);
            assertThat(all.array()).as("the file: its 100 bytes, then zeroes").isEqualTo(expected);
        }
    }

    private static long sum(long[] counts) {
        return LongStream.of(counts).sum();
    }
}
