package dev.iomap.api;

/**
 * Where a mount's page cache stands now, and how its reads fared: what the kernel shows in
 * {@code /proc/meminfo} ({@code Cached}, {@code Dirty}, {@code Writeback}) and what {@code cachestat}
 * counts. A snapshot; the byte figures are gauges, the read figures count since mount.
 *
 * @param budgetBytes the cache's memory budget ({@code PageCacheOptions.cacheBudgetBytes})
 * @param cachedBytes bytes of folios in the cache
 * @param dirtyBytes bytes in dirty folios (the kernel's {@code NR_FILE_DIRTY})
 * @param writebackBytes bytes in folios under writeback (the kernel's {@code NR_WRITEBACK})
 * @param readHits folios a buffered read found cached and uptodate
 * @param readMisses folios a buffered read had to read from the device first
 */
public record CacheStatus(long budgetBytes, long cachedBytes, long dirtyBytes, long writebackBytes, long readHits,
        long readMisses) {

    /** What a file system without a page cache of its own reports: all zero. */
    public static final CacheStatus NONE = new CacheStatus(0, 0, 0, 0, 0, 0);

    /**
     * @param earlier a snapshot of the same cache taken before this one
     * @return the share of the folios read between the two snapshots that were cache hits, from 0 to 1;
     *     1 if no folio was read
     */
    public double hitRatioSince(CacheStatus earlier) {
        long hits = readHits - earlier.readHits;
        long misses = readMisses - earlier.readMisses;
        return hits + misses == 0 ? 1 : (double) hits / (hits + misses);
    }
}
