package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.WritebackException;
import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.FolioLru;
import dev.iomap.core.mm.PageCache;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import dev.iomap.devices.RamBlockDevice;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** The flusher, writer throttling and reclaim. */
class BackgroundWritebackTest {
    private static final int K4 = 4096;
    private static final Duration NEVER = Duration.ofHours(1);

    private final RamBlockDevice device = new RamBlockDevice(K4, 64L << 20);

    private static PageCacheOptions.Builder small() {
        return PageCacheOptions.builder().maxFolioOrder(0).cacheBudgetBytes(64L << 20)
                .dirtyBackgroundBytes(64 * 1024).dirtyLimitBytes(128 * 1024)
                .dirtyExpire(NEVER).writebackInterval(NEVER);
    }

    /** Waits up to ten seconds for a condition that background threads make true. */
    private static void eventually(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition not reached in 10 s").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void theFlusherStartsWhenDirtyDataPassesTheBackgroundThreshold() throws Exception {
        try (IomapCache cache = new IomapCache(small().dirtyLimitBytes(1 << 20).build(), device)) {
            cache.startBackgroundWriteback();
            OpenFile file = cache.openBlockDevice();

            file.write(0, buffer(1, 0, 256 * 1024));

            eventually(() -> cache.dirtyBytes() <= 64 * 1024
                    && device.stats().dataBytesWritten() >= 192 * 1024);
            assertThat(device.stats().flushes()).isZero();
        }
    }

    @Test
    void theFlusherWritesBackExpiredData() throws Exception {
        try (IomapCache cache = new IomapCache(small().dirtyExpire(Duration.ofMillis(50))
                .writebackInterval(Duration.ofMillis(10)).build(), device)) {
            cache.startBackgroundWriteback();

            cache.openBlockDevice().write(3 * K4, buffer(2, 3 * K4, K4));

            eventually(() -> device.stats().dataBytesWritten() == K4 && cache.dirtyBytes() == 0);
            assertThat(TestIo.readDevice(device, 3 * K4, K4)).isEqualTo(pattern(2, 3 * K4, K4));
        }
    }

    @Test
    void writersAreThrottledAtTheHardDirtyLimit() throws Exception {
        IomapCache cache = new IomapCache(small().build(), device);
        OpenFile file = cache.openBlockDevice();

        for (int i = 0; i < 256; i++) {
            file.write((long) i * K4, buffer(3, (long) i * K4, K4));
            assertThat(cache.dirtyBytes()).isLessThanOrEqualTo(128 * 1024);
        }
        assertThat(device.stats().dataBytesWritten()).isGreaterThanOrEqualTo((256 - 32) * K4);
    }

    @Test
    void theCacheStaysWithinItsBudget() throws Exception {
        IomapCache cache = new IomapCache(small().cacheBudgetBytes(64 * 1024).build(), device);
        OpenFile file = cache.openBlockDevice();

        for (int i = 0; i < 64; i++) {
            read(file, (long) i * K4, K4);
            assertThat(cache.cachedBytes()).isLessThanOrEqualTo(64 * 1024);
        }
        assertThat(file.inode().pageCache().folioCount()).isLessThanOrEqualTo(16);
    }

    @Test
    void reclaimDropsTheLeastRecentlyUsedCleanFolioFirst() throws Exception {
        IomapCache cache = new IomapCache(small().cacheBudgetBytes(4 * K4).build(), device);
        OpenFile file = cache.openBlockDevice();
        for (int i = 0; i < 4; i++) {
            read(file, (long) i * K4, K4);
        }
        read(file, 0, K4);

        read(file, 4 * K4, K4);

        PageCache pages = file.inode().pageCache();
        assertThat(pages.lookup(1)).isNull();
        assertThat(pages.lookup(0)).isNotNull();
        assertThat(pages.lookup(2)).isNotNull();
        assertThat(pages.lookup(4)).isNotNull();
    }

    @Test
    void foliosReadOnceGoInTheOrderTheyCameAndASecondChanceIsSpentOnce() throws Exception {
        // Budget of four folios: each new folio past it drops one (down to 7/8 of the budget).
        IomapCache cache = new IomapCache(small().cacheBudgetBytes(4 * K4).build(), device);
        OpenFile file = cache.openBlockDevice();
        for (int i = 0; i < 4; i++) {
            read(file, (long) i * K4, K4);
        }
        read(file, 0, K4); // folio 0 earns a second chance

        PageCache pages = file.inode().pageCache();
        read(file, 4 * K4, K4); // 0 moves to the back, 1 goes
        assertThat(cachedPages(pages, 8)).containsExactly(0L, 2L, 3L, 4L);
        read(file, 5 * K4, K4); // 2 goes
        read(file, 6 * K4, K4); // 3 goes
        assertThat(cachedPages(pages, 8)).containsExactly(0L, 4L, 5L, 6L);
        read(file, 7 * K4, K4); // 0 spent its chance: it is the oldest now
        assertThat(cachedPages(pages, 8)).containsExactly(4L, 5L, 6L, 7L);
    }

    @Test
    void droppingTheCleanCacheDropsFoliosReadTwiceToo() throws Exception {
        IomapCache cache = new IomapCache(small().build(), device);
        OpenFile file = cache.openBlockDevice();
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 16; i++) {
                read(file, (long) i * K4, K4);
            }
        }

        cache.dropCleanCache();

        assertThat(file.inode().pageCache().folioCount()).isZero();
        assertThat(cache.cachedBytes()).isZero();
    }

    @Test
    void aShrinkDropsTheOldestEighthAndLeavesTheRestInPlace() throws Exception {
        // 1,024 clean folios read once; the budget then passes by one folio: down to 7/8 of it.
        IomapCache cache = new IomapCache(small().cacheBudgetBytes(1024 * K4).maxReadaheadBytes(0).build(), device);
        OpenFile file = cache.openBlockDevice();
        for (int i = 0; i < 1024; i++) {
            read(file, (long) i * K4, K4);
        }
        FolioLru lru = cache.folioLru();
        assertThat(lru.size()).isEqualTo(1024);
        Folio oldestKept = file.inode().pageCache().lookup(128);

        read(file, 1024L * K4, K4);

        PageCache pages = file.inode().pageCache();
        assertThat(pages.folioCount()).isEqualTo(1024 - 128 + 1);
        assertThat(pages.lookup(127)).isNull();
        assertThat(pages.lookup(128)).isSameAs(oldestKept);
        // The survivors kept their places: the next one taken is the oldest of them.
        assertThat(lru.takeOldest()).isSameAs(oldestKept);
        lru.putBack(oldestKept);
        assertThat(lru.size()).isEqualTo(1024 - 128 + 1);
    }

    /** @return the page indices of the folios cached among the first {@code pages} pages */
    private static java.util.List<Long> cachedPages(PageCache cache, int pages) {
        return cache.foliosIn(0, pages - 1).stream().map(Folio::index).toList();
    }

    @Test
    void reclaimNeverDropsDirtyData() throws Exception {
        IomapCache cache = new IomapCache(small().cacheBudgetBytes(8 * K4).dirtyLimitBytes(64L << 20)
                .dirtyBackgroundBytes(32L << 20).build(), device);
        OpenFile file = cache.openBlockDevice();

        for (int i = 0; i < 32; i++) {
            file.write((long) i * K4, buffer(4, (long) i * K4, K4));
        }
        cache.dropCleanCache();

        assertThat(file.inode().pageCache().folioCount()).isEqualTo(32);
        file.fsync();
        cache.dropCleanCache();
        assertThat(file.inode().pageCache().folioCount()).isZero();
        assertThat(read(file, 0, 32 * K4)).isEqualTo(pattern(4, 0, 32 * K4));
    }

    @Test
    void aWritebackErrorSurvivesReclaimAndReachesEveryOpenFileOnce() throws Exception {
        FaultInjectingDevice faulty = new FaultInjectingDevice(device);
        IomapCache cache = new IomapCache(small().build(), faulty);
        OpenFile writer = cache.openBlockDevice();
        OpenFile other = writer.inode().open();
        faulty.inject(Fault.writes(0, 64L << 20));
        writer.write(0, buffer(5, 0, 8 * K4));

        writer.inode().writeAndWait(0, Long.MAX_VALUE);
        cache.dropCleanCache();

        assertThat(writer.inode().pageCache().folioCount()).isZero();
        assertThatThrownBy(writer::fsync).isInstanceOf(WritebackException.class);
        assertThatCode(writer::fsync).doesNotThrowAnyException();
        assertThatThrownBy(other::fsync).isInstanceOf(WritebackException.class);
        assertThatCode(other::fsync).doesNotThrowAnyException();
    }
}
