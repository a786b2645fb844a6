package dev.iomap.spi.lock;

import java.io.IOException;

/**
 * How a mount joins the cluster of nodes sharing its device: claims a free journal slot and starts
 * this node's glock manager. The adapter calls it once per mount, after reading its superblock and
 * before it reads anything else.
 */
@FunctionalInterface
public interface ClusterJoin {

    /**
     * Joins.
     *
     * @param filesystemId what names the filesystem to the cluster (the same on every node mounting it)
     * @param journals how many journal slots the filesystem has (slots 0 to {@code journals - 1})
     * @param recovery replays the journal of a slot whose node died, for the survivors' recovery
     * @return this node's context
     * @throws IOException if no slot is free or the cluster cannot be reached
     */
    ClusterContext join(String filesystemId, int journals, JournalReplay recovery) throws IOException;

    /** Replays one slot's journal onto the shared device: a dead node's recovery. */
    @FunctionalInterface
    interface JournalReplay {
        /**
         * Replays slot {@code slot}'s journal: every committed transaction is written home, then the
         * journal is marked empty. Running it again (a crash during recovery) is harmless.
         *
         * @param slot the dead node's journal
         * @return the transactions it replayed (0 for a clean journal), for the recovery's report
         * @throws IOException if the device fails or the journal is damaged; the slot stays to be recovered
         */
        long replay(int slot) throws IOException;
    }
}
