package dev.iomap.core.mm;

import dev.iomap.api.PageCacheOptions;
import java.util.function.Predicate;

/**
 * The mappings that share one memory pool and one set of dirty limits, as the {@link Flusher} and
 * {@link Reclaim} see them: the kernel's {@code bdi_writeback} with its list of dirty inodes, plus
 * the memory accounting reclaim works from. The cache above implements it.
 */
public interface WritebackDomain {

    /** @return the budget, dirty thresholds and flusher intervals */
    PageCacheOptions options();

    /** @return bytes of dirty folios in every mapping */
    long dirtyBytes();

    /** @return bytes of folios cached in every mapping */
    long cachedBytes();

    /** @return every mapping's folios, in the order reclaim looks at them */
    FolioLru folioLru();

    /** @return the reclaimer of this domain */
    Reclaim reclaim();

    /**
     * Visits the mappings with dirty folios, in no particular order, until {@code visitor} returns
     * false (the kernel's walk of {@code b_dirty}).
     *
     * @param visitor told each dirty mapping; returns whether to go on
     */
    void forEachDirtyMapping(Predicate<PageCache> visitor);

    /**
     * The flusher ran out of memory and stopped; the domain decides what that means for its users.
     *
     * @param error the error the flusher caught
     */
    void outOfMemory(OutOfMemoryError error);
}
