package dev.iomap.core;

import static dev.iomap.testkit.TestData.buffer;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.IomapType;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cache's list of dirty inodes (the kernel's {@code b_dirty}), which the flusher walks instead of
 * every cached inode: an inode is on it exactly while a folio of it is dirty.
 */
class DirtyInodesTest {
    private static final int K4 = 4096;
    private static final Duration NEVER = Duration.ofHours(1);

    private static List<CachedInode> dirtyInodes(IomapCache cache) {
        List<CachedInode> dirty = new ArrayList<>();
        cache.forEachDirtyInode(dirty::add);
        return dirty;
    }

    @Test
    void theDirtyInodesAreThoseWithADirtyFolio() throws Exception {
        RamBlockDevice device = new RamBlockDevice(K4, 16L << 20);
        PageCacheOptions options = PageCacheOptions.builder().maxFolioOrder(0).cacheBudgetBytes(8L << 20)
                .dirtyExpire(NEVER).writebackInterval(NEVER).build();
        try (IomapCache cache = new IomapCache(options, device)) {
            CachedInode[] inodes = new CachedInode[4];
            for (int i = 1; i <= 3; i++) {
                ExtentTestOps ops = new ExtentTestOps(K4);
                ops.set(0, 1024, IomapType.MAPPED);
                inodes[i] = cache.addInode(i, K4, 0, 1L << 30, ops, ops);
            }
            assertThat(dirtyInodes(cache)).isEmpty();

            inodes[1].open().write(0, buffer(1, 0, K4));
            inodes[3].open().write(8 * K4, buffer(3, 8 * K4, 2 * K4));
            inodes[2].open().read(0, ByteBuffer.allocate(K4));

            assertThat(dirtyInodes(cache)).containsExactlyInAnyOrder(inodes[1], inodes[3]);

            inodes[1].writeAndWait(0, Long.MAX_VALUE);
            assertThat(dirtyInodes(cache)).containsExactly(inodes[3]);

            inodes[1].open().write(K4, buffer(4, K4, K4));
            assertThat(dirtyInodes(cache)).containsExactlyInAnyOrder(inodes[1], inodes[3]);

            cache.removeInode(3);
            List<CachedInode> left = dirtyInodes(cache);
            assertThat(left).containsExactly(inodes[1]);
        }
    }
}
