package dev.iomap.core.mm;

import java.util.concurrent.locks.ReentrantLock;

/**
 * Memory reclaim: when the cache holds more than its budget, clean folios are dropped, least
 * recently used first, until it is back under {@link #TARGET_FRACTION} of the budget. Dirty folios,
 * folios under writeback and locked folios are skipped. One reclaimer at a time; others go on.
 *
 * <p>"Least recently used" is the kernel's approximation of it: folios are looked at in the order
 * they entered the cache ({@link FolioLru}), and one accessed since it was listed gets a second
 * chance at the tail instead of being dropped. So a shrink looks at about as many folios as it
 * drops, however many are cached. (Before, every shrink sorted a snapshot of every cached folio by
 * its last access: with a 256 MiB budget of 4 KiB folios, half of a cold random read's CPU time.)
 */
public final class Reclaim {
    /** Reclaim down to 7/8 of the budget so that it does not run for every new folio. */
    public static final double TARGET_FRACTION = 0.875;

    private final WritebackDomain cache;
    private final ReentrantLock running = new ReentrantLock();

    /** @param cache the mappings whose clean folios this reclaimer drops */
    public Reclaim(WritebackDomain cache) {
        this.cache = cache;
    }

    /** Reclaims if the cache would pass its budget by {@code incoming} more bytes. */
    public void ifOverBudget(long incoming) {
        long budget = cache.options().cacheBudgetBytes();
        if (cache.cachedBytes() + incoming > budget) {
            shrink((long) (budget * TARGET_FRACTION));
        }
    }

    /**
     * Drops clean folios, oldest first, until at most {@code target} bytes are cached or every folio
     * listed when it began has been looked at twice (once to spend a second chance, once more to
     * drop it). The kernel's {@code shrink_folio_list} over the folios {@code shrink_inactive_list}
     * isolates from the tail of its LRU.
     *
     * @param target bytes to get down to
     * @return bytes freed
     */
    public long shrink(long target) {
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
    public long shrinkNow(long target) {
        running.lock();
        return shrinkLocked(target);
    }

    /** Runs with {@link #running} held, and releases it. */
    private long shrinkLocked(long target) {
        try {
            FolioLru lru = cache.folioLru();
            long looks = 2L * lru.size();
            long freed = 0;
            while (looks-- > 0 && cache.cachedBytes() > target) {
                Folio folio = lru.takeOldest();
                if (folio == null) {
                    break;
                }
                long dropped = FolioLru.wasAccessedSinceListed(folio) ? 0 : tryDrop(folio);
                if (dropped == 0) {
                    lru.putBack(folio);
                }
                freed += dropped;
            }
            return freed;
        } finally {
            running.unlock();
        }
    }

    private static long tryDrop(Folio folio) {
        if (folio.isDirty() || folio.isWriteback() || !folio.tryLock()) {
            return 0;
        }
        try {
            if (folio.isRemoved() || !folio.cache().aops().releaseFolio(folio)) {
                return 0;
            }
            folio.cache().remove(folio);
            return folio.size();
        } finally {
            folio.unlock();
        }
    }
}
