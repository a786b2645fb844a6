package dev.iomap.cluster;

import java.io.IOException;

/**
 * What the adapter does to recover a dead incarnation's journal: replay it onto the shared device. The
 * cluster calls it on one surviving (or newly mounting) node, holding that journal's recovery lock,
 * after the recovery margin, and before the dead incarnation's glocks are released: nobody else can be
 * granted what it held until this returned.
 */
@FunctionalInterface
public interface JournalRecovery {

    /**
     * Replays journal {@code slot}, which incarnation {@code dead} used.
     *
     * @param slot the journal slot, 0 to journals-1
     * @param dead the incarnation that owned it (its node id may be live again as another incarnation)
     * @return the transactions replayed (0 for a clean journal), for the recovery's report
     * @throws IOException if the replay failed: the dead incarnation's glocks stay held and its journal
     *     stays marked in use; the recovery is tried again after the margin
     */
    long replay(int slot, Incarnation dead) throws IOException;
}
