package dev.iomap.core;

import static dev.iomap.testkit.TestData.buffer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.iomap.api.FileExtent;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The extent report over a hole that the cache holds dirty (the runs {@code Fiemap} adds to the
 * kernel's report), and its race with writeback: 1 KiB blocks in 4 KiB pages, an adapter that
 * allocates only at writeback.
 */
class FiemapTest {
    private static final int K1 = 1024;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K1, 16L << 20);
    private final IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(2).build(), device);
    private final ExtentTestOps ops = new ExtentTestOps(K1);

    private CachedInode dirtyAt(long pos, int length) throws Exception {
        CachedInode inode = cache.addInode(1, K1, 0, MAX, ops, ops);
        assertThat(inode.write(pos, CopySource.of(buffer(3, pos, length)), length)).isEqualTo(length);
        return inode;
    }

    @Test
    void dirtyBlocksOverAHoleAreReportedAsDelayedAllocationAndAfterWritebackAsMapped() throws Exception {
        CachedInode inode = dirtyAt(2 * K1, 3 * K1);

        assertThat(inode.fiemap(0, MAX, false)).containsExactly(new FileExtent(2 * K1, 0, 3 * K1,
                EnumSet.of(FileExtent.Flag.DELALLOC, FileExtent.Flag.UNKNOWN, FileExtent.Flag.LAST)));
        assertThat(ops.blocks()).as("reporting allocated nothing").isEmpty();

        List<FileExtent> after = inode.fiemap(0, MAX, true);
        assertThat(ops.blocks()).containsOnlyKeys(2L, 3L, 4L);
        assertThat(after).extracting(FileExtent::logical, FileExtent::length)
                .containsExactly(tuple(2L * K1, 3L * K1));
        assertThat(after.getFirst().flags()).doesNotContain(FileExtent.Flag.DELALLOC);
    }

    @Test
    void aRunWrittenBackBetweenTheLookForItsStartAndTheLookForItsEndIsNotReported() throws Exception {
        CachedInode inode = dirtyAt(K1, K1);
        List<String> looks = new ArrayList<>();
        // The flusher (or reclaim) cleans the block right after fiemap found it dirty: the look for the
        // run's end then finds a clean block where the run began. CI met this under memory pressure
        // (gfs2-like, fsx) as an extent of length 0, which FileExtent refuses.
        Fiemap.DirtyScan racing = (in, from, end, wantData) -> {
            long found = Fiemap.DirtyScan.CACHE.scan(in, from, end, wantData);
            looks.add((wantData ? "dirty " : "clean ") + from + " -> " + found);
            if (wantData && found >= 0 && looks.size() == 1) {
                inode.writeAndWait(0, Long.MAX_VALUE);
            }
            return found;
        };

        List<FileExtent> runs = Fiemap.cachedRuns(inode, 0, 4 * K1, racing);

        assertThat(runs).isEmpty();
        assertThat(looks).containsExactly("dirty 0 -> 1024", "clean 1024 -> 1024", "dirty 2048 -> -1");
        assertThat(ops.blocks()).containsOnlyKeys(1L);
    }
}
