package dev.iomap.core.mm;

/**
 * Where the folio memory of one {@code IomapCache} stands, in bytes: for this cache, what the kernel
 * reports in {@code /proc/meminfo} ({@code meminfo_proc_show}); the overflow has no counterpart.
 *
 * @param budget the cache budget ({@code cacheBudgetBytes}); reclaim keeps cached folios under it
 * @param poolCapacity the most the pool reserves: the budget plus one largest folio
 * @param reserved what the pool has reserved from the system so far (it grows on demand)
 * @param inUse what the pool has handed to folios and not had back
 * @param overflow memory outside the pool held by folios now (taken only when the pool was empty and
 *     nothing could be reclaimed; returned to the system when those folios go)
 * @param overflowAllocations how many times the pool was bypassed so far
 */
public record FolioMemoryStats(long budget, long poolCapacity, long reserved, long inUse, long overflow,
        long overflowAllocations) {
}
