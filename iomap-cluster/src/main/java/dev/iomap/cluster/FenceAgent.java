package dev.iomap.cluster;

import java.io.IOException;

/**
 * Keeps a dead incarnation's host off the shared storage before its journal is replayed: GFS2's rule
 * that a failed node is fenced before recovery, for storage without SCSI persistent reservations (an
 * NBD export, a file). A node whose ZooKeeper session expired stops writing on its own (its lease), but a
 * write it issued just before, still in a socket buffer or a switch, or a process stopped between its
 * lease check and its write, could land after the survivors replayed and wrote on: the agent closes that.
 *
 * <p>{@link ClusterRecovery} calls it under the dead journal's recovery lock, after the recovery margin
 * and right before the replay; a failure leaves the journal unrecovered and the dead incarnation's glocks
 * held, and the recovery is tried again after the margin (as GFS2 waits for fencing to succeed). It is not
 * called when the dead incarnation's node id is live again as a newer incarnation: that host was let back
 * (unfenced) after its old process ended, so there is nothing left to fence, and fencing by node id would
 * cut off the live one. Implementations are thread-safe.
 */
@FunctionalInterface
public interface FenceAgent {
    /** No fencing: the lease alone keeps a dead node's writes out (the default, for storage on one host). */
    FenceAgent NONE = dead -> { };

    /**
     * Fences the host of {@code dead}: when this returns, nothing that host sent or sends reaches the
     * shared storage any more, until it is let back in (unfenced) outside the filesystem.
     *
     * @param dead the incarnation whose journal is about to be replayed
     * @throws IOException if fencing failed or could not be confirmed: nothing may be replayed
     */
    void fence(Incarnation dead) throws IOException;
}
