package dev.iomap.core.mm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import org.junit.jupiter.api.Test;

class PageCacheTest {
    private final CacheStats stats = new CacheStats();

    private PageCache cache(int maxOrder) {
        return new PageCache(PageCacheOptions.builder().maxFolioOrder(maxOrder).build(), 4096, stats);
    }

    private static Folio grab(PageCache cache, long index, int order) {
        Folio folio = cache.grabLocked(index, order);
        folio.unlock();
        return folio;
    }

    /** 16 KiB blocks over 4 KiB pages: minimum folio order 2. */
    private PageCache largeBlockCache(int maxOrder) {
        return new PageCache(PageCacheOptions.builder().maxFolioOrder(maxOrder).build(), 16384, stats);
    }

    @Test
    void aBlockLargerThanThePageSetsTheMinimumOrderAndRaisesTheLargest() {
        PageCache cache = largeBlockCache(0);

        assertThat(cache.minOrder()).isEqualTo(2);
        assertThat(cache.maxOrder()).isEqualTo(2);
        assertThat(largeBlockCache(9).maxOrder()).isEqualTo(9);
        assertThat(cache(3).minOrder()).isZero();
        assertThat(PageCache.minOrder(65536, 4096)).isEqualTo(4);
        assertThat(PageCache.minOrder(1024, 4096)).isZero();
    }

    @Test
    void aFolioGrabbedInsideABlockStartsAtTheBlockAndHoldsIt() {
        PageCache cache = largeBlockCache(0);

        Folio folio = grab(cache, 7, 0);

        assertThat(folio.index()).isEqualTo(4);
        assertThat(folio.order()).isEqualTo(2);
        assertThat(cache.lookup(4)).isSameAs(folio);
        assertThat(grab(cache, 5, 9)).isSameAs(folio);
        assertThat(cache.folioCount()).isEqualTo(1);
    }

    @Test
    void aLargerOrderIsLoweredToFitBetweenCachedFoliosButNeverBelowTheMinimum() {
        PageCache cache = largeBlockCache(9);
        grab(cache, 8, 0);   // [8, 12)

        Folio first = grab(cache, 1, 5);
        Folio after = grab(cache, 12, 5);

        assertThat(first.index()).isZero();
        assertThat(first.order()).isEqualTo(3);
        assertThat(after.index()).isEqualTo(12);
        assertThat(after.order()).isEqualTo(2);
    }

    @Test
    void readaheadInsertsMinimumOrderFoliosAtTheAlignedIndexOrNothingOverACachedOne() {
        PageCache cache = largeBlockCache(0);

        Folio folio = cache.addForReadahead(10, 0);

        assertThat(folio.index()).isEqualTo(8);
        assertThat(folio.order()).isEqualTo(2);
        assertThat(folio.isLockedByCurrentThread()).isFalse();
        assertThat(cache.addForReadahead(11, 0)).isNull();
        assertThat(cache.addForReadahead(12, 3).order()).isEqualTo(2);
    }

    @Test
    void aMinimumOrderAboveThePoolsLargestIsServedAsOversizeBlocksWithinItsCapacity() {
        PageCacheOptions options = PageCacheOptions.builder().maxFolioOrder(0).build();
        FolioMemoryPool pool = new FolioMemoryPool(3 * 65536, 4096, 0);
        PageCache cache = new PageCache(options, 65536, stats, pool, new FolioLru(), bytes -> { }, () -> { });

        Folio first = cache.addForReadahead(0, 0);
        cache.addForReadahead(16, 0);
        cache.addForReadahead(32, 0);

        assertThat(first.order()).isEqualTo(4);
        assertThat(first.size()).isEqualTo(65536);
        assertThat(pool.inUseBytes()).isEqualTo(3 * 65536);
        assertThat(cache.addForReadahead(48, 0)).as("the capacity is used up").isNull();
        first.lock();
        cache.remove(first);
        first.unlock();
        assertThat(pool.inUseBytes()).isEqualTo(2 * 65536);
        assertThat(cache.addForReadahead(48, 0).index()).isEqualTo(48);
        pool.close();
    }

    @Test
    void orderHintIsFloorLog2OfTheLengthInPages() {
        assertThat(FolioOrder.hint(0, 12)).isZero();
        assertThat(FolioOrder.hint(4096, 12)).isZero();
        assertThat(FolioOrder.hint(8191, 12)).isZero();
        assertThat(FolioOrder.hint(8192, 12)).isEqualTo(1);
        assertThat(FolioOrder.hint(128 * 1024, 12)).isEqualTo(5);
        assertThat(FolioOrder.hint(3L << 20, 12)).isEqualTo(9);
        assertThat(FolioOrder.hint(128 * 1024, 16)).isEqualTo(1);
    }

    @Test
    void orderHintFallsBackWhenALargerFolioCannotBePlaced() {
        PageCache cache = cache(9);
        grab(cache, 3, 0);

        Folio folio = grab(cache, 0, 3);

        assertThat(folio.index()).isZero();
        assertThat(folio.order()).isEqualTo(1);
        assertThat(cache.lookup(1)).isSameAs(folio);
        assertThat(cache.lookup(2)).isNull();
    }

    @Test
    void orderIsLoweredToTheAlignmentOfTheIndex() {
        PageCache cache = cache(9);

        Folio folio = grab(cache, 6, 4);

        assertThat(folio.index()).isEqualTo(6);
        assertThat(folio.order()).isEqualTo(1);
    }

    @Test
    void orderIsCappedAtTheLargestOrder() {
        PageCache cache = cache(2);

        Folio folio = grab(cache, 0, 9);

        assertThat(folio.order()).isEqualTo(2);
        assertThat(folio.size()).isEqualTo(4 * 4096);
        assertThat(stats.snapshot(dev.iomap.device.DeviceStats.ZERO).foliosByOrder()[2]).isEqualTo(1);
    }

    @Test
    void lookupFindsTheFolioCoveringAnyOfItsPages() {
        PageCache cache = cache(9);
        Folio folio = grab(cache, 16, 4);

        assertThat(cache.lookup(15)).isNull();
        assertThat(cache.lookup(16)).isSameAs(folio);
        assertThat(cache.lookup(31)).isSameAs(folio);
        assertThat(cache.lookup(32)).isNull();
        assertThat(grab(cache, 20, 0)).isSameAs(folio);
    }

    @Test
    void dirtyFoliosAreFoundInIndexOrderWithoutCleanOnes() {
        PageCache cache = cache(0);
        for (long index : new long[] {9, 2, 5, 7}) {
            grab(cache, index, 0);
        }
        for (long index : new long[] {9, 2, 7}) {
            cache.lookup(index).markDirty();
        }

        assertThat(dirtyFrom(cache, 0)).containsExactly(2L, 7L, 9L);
        assertThat(dirtyFrom(cache, 3)).containsExactly(7L, 9L);
        cache.lookup(7).clearDirtyForIo();
        assertThat(dirtyFrom(cache, 0)).containsExactly(2L, 9L);
    }

    private static java.util.List<Long> dirtyFrom(PageCache cache, long from) {
        java.util.List<Long> indices = new java.util.ArrayList<>();
        for (long index = cache.nextDirty(from, Long.MAX_VALUE); index >= 0;
                index = cache.nextDirty(index + 1, Long.MAX_VALUE)) {
            indices.add(index);
        }
        return indices;
    }

    @Test
    void poisonedFoliosStartFullOfPoison() {
        PageCache cache = new PageCache(PageCacheOptions.builder().poisonNewFolios(true).build(), 4096, stats);
        Folio folio = grab(cache, 0, 0);
        assertThat(folio.memory().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 100))
                .isEqualTo(PageCacheOptions.POISON_BYTE);
    }
}
