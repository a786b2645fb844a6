package dev.iomap.cluster;

import java.io.IOException;

/**
 * What the adapter does to recover a dead node's journal: replay it onto the shared device. The
 * cluster calls it on one surviving (or newly mounting) node, holding that journal's recovery lock,
 * after the recovery margin, and before the dead node's glocks are released: nobody else can be
 * granted what the dead node held until this returned.
 */
@FunctionalInterface
public interface JournalRecovery {

    /**
     * Replays journal {@code slot}, which node {@code deadNodeId} used.
     *
     * @param slot the journal slot, 0 to journals-1
     * @param deadNodeId the node that owned it
     * @throws IOException if the replay failed: the dead node's glocks stay held and its journal stays
     *     marked in use; the recovery is tried again after the margin
     */
    void replay(int slot, String deadNodeId) throws IOException;
}
