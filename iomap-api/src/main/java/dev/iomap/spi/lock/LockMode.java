package dev.iomap.spi.lock;

/**
 * The mode a holder has a glock in, with the compatibility of GFS2's glock states (and the DLM modes
 * they map to): {@code UN} (unlocked, DLM NL), {@code SH} (shared, PR), {@code DF} (deferred, CW) and
 * {@code EX} (exclusive, EX).
 *
 * <p>Two holders may have one lock at the same time only in compatible modes: {@code UN} with
 * every mode, {@code SH} with {@code SH}, {@code DF} with {@code DF}, {@code EX} with {@code UN} only.
 * What a mode lets the holder keep in its cache: nothing under {@code UN} or {@code DF} (deferred is
 * the mode of direct I/O, which bypasses the cache), clean data under {@code SH}, clean and dirty
 * data under {@code EX}.
 */
public enum LockMode {
    /** Unlocked: the holder caches nothing and conflicts with nobody. */
    UN,
    /** Shared: readers on every node may cache clean data. */
    SH,
    /** Deferred: holders on every node may do direct I/O together; nobody caches. */
    DF,
    /** Exclusive: one holder, which may cache dirty data. */
    EX;

    /**
     * @param other the mode another holder has or wants
     * @return whether a holder in this mode and one in {@code other} may hold the same lock at once
     */
    public boolean compatibleWith(LockMode other) {
        if (this == UN || other == UN) {
            return true;
        }
        return this == other && this != EX;
    }

    /**
     * Whether a holder that has the lock in this mode may serve a use that asks for
     * {@code wanted} without asking the manager: the same mode, {@code UN}, or anything from
     * {@code EX} (GFS2's {@code may_grant} for a glock already held in {@code EX}).
     *
     * @param wanted the mode a use of the lock needs
     * @return whether this mode satisfies it
     */
    public boolean covers(LockMode wanted) {
        return this == wanted || wanted == UN || this == EX;
    }

    /** @return whether a holder in this mode may keep the file's data cached ({@code SH}, {@code EX}) */
    public boolean allowsCaching() {
        return this == SH || this == EX;
    }

    /** @return whether a holder in this mode may keep dirty data ({@code EX} only) */
    public boolean allowsDirty() {
        return this == EX;
    }
}
