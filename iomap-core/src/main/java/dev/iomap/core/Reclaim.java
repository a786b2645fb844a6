package dev.iomap.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Memory reclaim: when the cache holds more than its budget, clean folios are dropped, least
 * recently used first, until it is back under {@link #TARGET_FRACTION} of the budget. Dirty folios,
 * folios under writeback and locked folios are skipped. One reclaimer at a time; others go on.
 */
final class Reclaim {
    /** Reclaim down to 7/8 of the budget so that it does not run for every new folio. */
    static final double TARGET_FRACTION = 0.875;

    private final IomapCache cache;
    private final ReentrantLock running = new ReentrantLock();

    Reclaim(IomapCache cache) {
        this.cache = cache;
    }

    /** Reclaims if the cache would pass its budget by {@code incoming} more bytes. */
    void ifOverBudget(long incoming) {
        long budget = cache.options().cacheBudgetBytes();
        if (cache.cachedBytes() + incoming > budget) {
            shrink((long) (budget * TARGET_FRACTION));
        }
    }

    /**
     * Drops clean folios, oldest access first, until at most {@code target} bytes are cached or no
     * clean unlocked folio is left. The kernel's {@code shrink_folio_list}, over folios ordered as its
     * LRU would be ({@code shrink_inactive_list}).
     *
     * @param target bytes to get down to
     * @return bytes freed
     */
    long shrink(long target) {
        if (!running.tryLock()) {
            return 0;
        }
        return shrinkLocked(target);
    }

    /**
     * As {@link #shrink}, but waits for a reclaimer already running instead of leaving the work to
     * it: an allocation that found the memory pool empty must not fall back to memory outside it
     * while clean folios could still be dropped. The kernel's {@code shrink_folio_list}, as direct
     * reclaim calls it ({@code shrink_inactive_list}).
     *
     * @param target bytes to get down to
     * @return bytes freed
     */
    long shrinkNow(long target) {
        running.lock();
        return shrinkLocked(target);
    }

    /** Runs with {@link #running} held, and releases it. */
    private long shrinkLocked(long target) {
        try {
            // Access times change under us: sort a snapshot of them, not the live values.
            List<Candidate> candidates = new ArrayList<>();
            for (CachedInode inode : cache.inodes()) {
                for (Folio folio : inode.pageCache().foliosIn(0, Long.MAX_VALUE)) {
                    candidates.add(new Candidate(folio.lastAccess(), folio));
                }
            }
            candidates.sort(Comparator.comparingLong(Candidate::lastAccess));
            long freed = 0;
            for (Candidate candidate : candidates) {
                Folio folio = candidate.folio();
                if (cache.cachedBytes() <= target) {
                    break;
                }
                freed += tryDrop(folio);
            }
            return freed;
        } finally {
            running.unlock();
        }
    }

    private record Candidate(long lastAccess, Folio folio) {
    }

    private static long tryDrop(Folio folio) {
        if (folio.isDirty() || folio.isWriteback() || !folio.tryLock()) {
            return 0;
        }
        try {
            if (folio.isRemoved() || !Invalidate.releaseFolio(folio)) {
                return 0;
            }
            folio.cache().remove(folio);
            return folio.size();
        } finally {
            folio.unlock();
        }
    }
}
