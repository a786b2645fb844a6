package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.Journal;
import dev.iomap.spi.lock.LockStats;
import java.util.LinkedHashMap;
import java.util.Map;

/** The counters a gfs2-like mount reports ({@code IoStats.adapterCounters()}, {@code iomap stat}, bench). */
final class MountCounters {
    private MountCounters() {
    }

    /**
     * The mount's counters, in this order: {@code glock.acquisitions} (every glock lock, whether it
     * needed the lock manager or not), {@code glock.grants} (those the manager had to grant: the node did
     * not hold the mode; on ZooKeeper each costs requests), {@code glock.cachedHolds} (those served from
     * the mode the node kept: no request), {@code glock.demotions} (this node's glocks lowered for
     * another holder), {@code glock.pagesInvalidated}, {@code journal.commits},
     * {@code journal.blocksLogged}, {@code journal.checkpoints}, {@code journal.dataCommits},
     * {@code trim.bytes} (bytes FITRIM discarded), then the
     * lock manager's service counters prefixed {@code glock.} (on ZooKeeper: {@code glock.zk.requests},
     * every request this node sent, one round trip each; {@code glock.zk.demoteRequestsSent}), then on a
     * cluster node the cluster's counters prefixed {@code cluster.} (on ZooKeeper:
     * {@code cluster.recovery.journals}, the dead nodes' journals this node recovered,
     * {@code cluster.recovery.transactions} replayed for them, {@code cluster.recovery.millis} those
     * recoveries took, {@code cluster.recovery.failures}, {@code cluster.recovery.staleIncarnations}).
     *
     * @param journal the node's journal counters
     * @param glocks the node's glocks
     * @param tx the node's transactions
     * @param trimmedBytes bytes the mount's trims discarded
     * @param cluster the cluster's counters of this node ({@code ClusterContext.counters}); none on a
     *     single node
     * @return the counters, a snapshot
     */
    static Map<String, Long> of(Journal.Stats journal, Glocks glocks, Gfs2Transactions tx, long trimmedBytes,
            Map<String, Long> cluster) {
        Map<String, Long> counters = new LinkedHashMap<>();
        LockStats locks = glocks.stats();
        counters.put("glock.acquisitions", locks.acquisitions() + locks.cachedHolds());
        counters.put("glock.grants", locks.acquisitions());
        counters.put("glock.cachedHolds", locks.cachedHolds());
        counters.put("glock.demotions", locks.demotions());
        counters.put("glock.pagesInvalidated", locks.pagesInvalidated());
        counters.put("journal.commits", tx.commits());
        counters.put("journal.blocksLogged", journal.blocksLogged());
        counters.put("journal.checkpoints", journal.checkpoints());
        counters.put("journal.dataCommits", tx.dataCommits());
        counters.put("trim.bytes", trimmedBytes);
        glocks.serviceCounters().forEach((name, value) -> counters.put("glock." + name, value));
        cluster.forEach((name, value) -> counters.put("cluster." + name, value));
        return counters;
    }
}
