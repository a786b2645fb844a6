package dev.iomap.core.mm;

/**
 * What readahead did in one {@code IomapCache} so far (the kernel counts the like in
 * {@code /proc/vmstat}: {@code pgpgin}, and the {@code mm_filemap} tracepoints).
 *
 * @param syncWindows windows started by a read miss that looked sequential
 *     ({@code page_cache_sync_ra} reading ahead)
 * @param asyncWindows windows started by a reader reaching a folio carrying the readahead marker
 *     ({@code page_cache_async_ra})
 * @param randomMisses read misses that looked random and read only what the read needed
 * @param bytesAdded bytes of folios inserted ahead of the reader, to be read in the background
 * @param bytesRead bytes of those folios the background readahead made uptodate
 * @param foliosSkipped folios inserted ahead that the background readahead left alone because
 *     another thread had locked, filled, written or removed them first
 */
public record ReadaheadStats(long syncWindows, long asyncWindows, long randomMisses, long bytesAdded,
        long bytesRead, long foliosSkipped) {
}
