package dev.iomap.spi.lock;

/**
 * The counters of one {@link LockManager}, all since it was created. A transition is counted on the
 * manager of the holder it happens to.
 *
 * @param acquisitions modes granted by the manager: every acquire, and every {@link LockHandle#lock}
 *     that needed a mode its holder did not have (after a demotion, or an upgrade)
 * @param cachedHolds {@link LockHandle#lock} calls served from the mode the holder already had
 * @param demotions transitions to a weaker mode that a request caused, callbacks run: another
 *     holder's, or this holder's own {@code SH} to {@code DF} conversion (which drops its cache)
 * @param releases {@link LockHandle#release} calls that completed
 * @param pagesInvalidated the sum of what {@link DemoteCallbacks#invalidate} returned, demotions and
 *     releases alike
 */
public record LockStats(long acquisitions, long cachedHolds, long demotions, long releases,
        long pagesInvalidated) {
}
