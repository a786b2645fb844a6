package dev.iomap.core.mm;

import dev.iomap.api.PageCacheOptions;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** Finding the folio that covers a page index, in caches of small and large folios. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FolioLookupBenchmark {

    /** Order of every folio in the cache. */
    @Param({"0", "4", "9"})
    public int order;

    private PageCache cache;
    private long pages;
    private final SplittableRandom random = new SplittableRandom(1);

    /** Fills a cache covering 256 MiB of 4 KiB pages. */
    @Setup
    public void setUp() {
        PageCacheOptions options = PageCacheOptions.builder().maxFolioOrder(9).cacheBudgetBytes(1L << 30).build();
        cache = new PageCache(options, 4096, new CacheStats());
        pages = 65536;
        for (long index = 0; index < pages; index += 1L << order) {
            cache.grabLocked(index, order).unlock();
        }
    }

    /**
     * @return the folio covering a random page
     */
    @Benchmark
    public Folio lookup() {
        return cache.lookup(random.nextLong(pages));
    }
}
