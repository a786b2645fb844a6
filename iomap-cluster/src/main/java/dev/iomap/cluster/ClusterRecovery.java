package dev.iomap.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * The survivors' side of a node's death, by incarnation. A journal whose in-use marker
 * ({@code journals/<slot>}) names an incarnation that has no membership znode of that slot any more
 * belongs to a dead incarnation (a clean unmount deletes the marker before its membership). For every
 * such journal, after the recovery margin, this node takes the journal's recovery lock (a Curator
 * {@link InterProcessMutex}, lock znodes under {@code recovery/<slot>}), checks again that the journal
 * is still unrecovered, runs the adapter's {@link JournalRecovery}, then deletes every holder znode of
 * that incarnation (its glocks: requests that waited for them are granted now; the live incarnation of
 * the same node id, if any, keeps its own) and its demote directory, and last the marker. It logs one
 * line and counts the journal, its transactions and the time it took ({@link #counters}).
 *
 * <p>It watches the membership directory (one persistent watch) and looks again at every change.
 * Several survivors may race: the recovery lock and the re-check make one of them recover each journal
 * once. A node that claims the slot of a dead incarnation, its own node id's included, recovers it
 * itself before using it ({@link #recoverSlot}); a journal of this node id's dead incarnation on another
 * slot is recovered like any other. A node that joins also deletes what stale incarnations left (dead,
 * no journal to recover, but a demote directory and maybe holder entries: {@link #sweepStale}).
 *
 * <p>Thread-safe; recoveries run on one thread of its own.
 */
public final class ClusterRecovery implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ClusterRecovery.class.getName());

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final Incarnation self;
    private final JournalRecovery replay;
    private final Duration margin;
    private final Fence fence;
    private final FenceAgent agent;
    private final ZkCalls zk = new ZkCalls();
    private final ScheduledThreadPoolExecutor worker;
    private final Set<Integer> scheduled = new HashSet<>();
    private final Watcher membersWatcher = event -> scheduleScan();
    private final AtomicLong recovered = new AtomicLong();
    private final AtomicLong transactions = new AtomicLong();
    private final AtomicLong nanos = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong staleSwept = new AtomicLong();
    private final AtomicLong fenced = new AtomicLong();
    private volatile boolean watching;

    /**
     * @param client this node's started client
     * @param paths the filesystem's znodes
     * @param self this mount's incarnation
     * @param replay the adapter's journal replay
     * @param margin how long to wait after a node was found dead before recovering it
     * @param fence this node's fence: a fenced node recovers nobody
     * @param agent what keeps a dead incarnation's host off the storage before its replay
     */
    ClusterRecovery(CuratorFramework client, ZkPaths paths, Incarnation self, JournalRecovery replay,
            Duration margin, Fence fence, FenceAgent agent) {
        this.client = client;
        this.paths = paths;
        this.self = Objects.requireNonNull(self, "self");
        this.replay = Objects.requireNonNull(replay, "replay");
        this.margin = Objects.requireNonNull(margin, "margin");
        this.fence = fence;
        this.agent = Objects.requireNonNull(agent, "agent");
        this.worker = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "iomap-cluster-recovery-" + self);
            t.setDaemon(true);
            return t;
        });
        worker.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Starts watching the members and looks for dead incarnations' journals now. */
    void start() throws IOException {
        String members = paths.members();
        zk.checked("watch " + members, () -> client.watchers().add().withMode(AddWatchMode.PERSISTENT)
                .usingWatcher(membersWatcher).forPath(members));
        watching = true;
        scheduleScan();
    }

    /** @return journals this node recovered */
    public long recovered() {
        return recovered.get();
    }

    /** @return recoveries that failed here (replay threw, or ZooKeeper failed) and were rescheduled */
    public long failures() {
        return failures.get();
    }

    /**
     * @return in this order: {@code recovery.journals} (dead incarnations' journals this node recovered,
     *     at its join or as a survivor), {@code recovery.transactions} (the transactions their replays
     *     applied), {@code recovery.millis} (the time those recoveries took, replay to marker deleted),
     *     {@code recovery.failures} ({@link #failures}), {@code recovery.staleIncarnations} (dead
     *     incarnations whose leftovers {@link #sweepStale} deleted), {@code recovery.fenced} (dead
     *     incarnations this node's {@link FenceAgent} fenced before their replay); a snapshot
     */
    public Map<String, Long> counters() {
        Map<String, Long> counters = new LinkedHashMap<>();
        counters.put("recovery.journals", recovered.get());
        counters.put("recovery.transactions", transactions.get());
        counters.put("recovery.millis", TimeUnit.NANOSECONDS.toMillis(nanos.get()));
        counters.put("recovery.failures", failures.get());
        counters.put("recovery.staleIncarnations", staleSwept.get());
        counters.put("recovery.fenced", fenced.get());
        return counters;
    }

    private void scheduleScan() {
        try {
            worker.execute(this::scan);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    private void scan() {
        if (fence.isFenced()) {
            return;
        }
        try {
            Set<Integer> markers = slots(paths.journals());
            Set<Integer> members = slots(paths.members());
            for (int slot : markers) {
                if (!members.contains(slot) && scheduledNew(slot)) {
                    worker.schedule(() -> recoverLater(slot), margin.toNanos(), TimeUnit.NANOSECONDS);
                }
            }
        } catch (IOException e) {
            failures.incrementAndGet();
        } catch (RejectedExecutionException e) {
            // closed meanwhile
        }
    }

    private synchronized boolean scheduledNew(int slot) {
        return scheduled.add(slot);
    }

    private synchronized void unschedule(int slot) {
        scheduled.remove(slot);
    }

    private void recoverLater(int slot) {
        unschedule(slot);
        try {
            recoverSlot(slot);
        } catch (IOException e) {
            failures.incrementAndGet();
            // retried at the next scan; said once per attempt, as a failed fence keeps the journal unreplayed
            LOG.log(System.Logger.Level.WARNING, "node " + self + " could not recover journal " + slot
                    + " (retried after the margin): " + e.getMessage());
            scheduleScan();
        }
    }

    /**
     * Recovers journal {@code slot} if its marker names another incarnation than this one and no other
     * live incarnation is its member (a dead one's; this node claimed the slot, or nobody did): under the
     * slot's recovery lock, fence its host ({@link FenceAgent}; not if its node id is live again), replay,
     * release that incarnation's glocks, delete the marker, log one line.
     * Does nothing if the journal is clean or another live incarnation owns it.
     *
     * @param slot the journal slot
     * @return the dead incarnation whose journal was recovered, or null if there was nothing to do
     * @throws IOException if the fencing, the replay or ZooKeeper failed; the dead incarnation's glocks
     *     stay held
     */
    Incarnation recoverSlot(int slot) throws IOException {
        fence.check();
        InterProcessMutex mutex = new InterProcessMutex(client, paths.recoveryLock(slot));
        zk.checked("take recovery lock of journal " + slot, () -> {
            mutex.acquire();
            return null;
        });
        try {
            Incarnation dead = ZkIncarnations.marker(zk, client, paths, slot);
            if (dead == null || dead.equals(self)) {
                return null;
            }
            byte[] member = ZkIncarnations.read(zk, client, paths.member(slot), new Stat());
            if (member != null && !self.toString().equals(new String(member, StandardCharsets.UTF_8))) {
                return null;   // a live incarnation claimed it and recovers it itself
            }
            fence.check();
            long start = System.nanoTime();
            fenceUnlessLiveAgain(dead);
            fence.check();
            long replayed = replay.replay(slot, dead);
            releaseGlocksOf(Set.of(dead), false);
            zk.checked("delete marker of journal " + slot, () -> {
                client.delete().forPath(paths.journal(slot));
                return null;
            });
            long took = System.nanoTime() - start;
            recovered.incrementAndGet();
            transactions.addAndGet(replayed);
            nanos.addAndGet(took);
            LOG.log(System.Logger.Level.INFO, "node " + self + " recovered journal " + slot + " of dead node "
                    + dead + ": " + replayed + " transactions replayed in " + TimeUnit.NANOSECONDS.toMillis(took)
                    + " ms");
            return dead;
        } finally {
            zk.checked("release recovery lock of journal " + slot, () -> {
                mutex.release();
                return null;
            });
        }
    }

    /**
     * Runs the fence agent on {@code dead}'s host, unless its node id holds a live incarnation again (that
     * host was let back after its old process ended; fencing it by node id would cut off the live one).
     */
    private void fenceUnlessLiveAgain(Incarnation dead) throws IOException {
        if (agent == FenceAgent.NONE) {
            return;
        }
        byte[] claim = ZkIncarnations.read(zk, client, paths.node(dead.nodeId()), new Stat());
        if (claim != null) {
            LOG.log(System.Logger.Level.INFO, "node " + self + " does not fence dead node " + dead + ": node id "
                    + dead.nodeId() + " is live again as incarnation " + new String(claim, StandardCharsets.UTF_8));
            return;
        }
        agent.fence(dead);
        fenced.incrementAndGet();
        LOG.log(System.Logger.Level.INFO, "node " + self + " fenced dead node " + dead + " before its replay");
    }

    /**
     * Deletes what stale incarnations left: dead ones that no journal marker names (their journals are
     * clean or recovered) but that still have a demote directory, and maybe holder entries (an unmount
     * whose release failed, a fenced unmount whose journal was recovered before its glocks, ZooKeeper
     * restarted with its data). Their entries would stand in the way of every request until its glock
     * timeout, as nobody answers their demote requests. Called by a node that joins, after it recovered
     * and marked its own slot; demote directories of an older format, which no incarnation names, go
     * too.
     *
     * @throws IOException if ZooKeeper failed
     */
    void sweepStale() throws IOException {
        List<String> directories = childrenOrEmpty(paths.demotes());
        Set<Incarnation> candidates = new HashSet<>();
        boolean olderFormat = false;
        for (String directory : directories) {
            Incarnation incarnation = Incarnation.parseOrNull(directory);
            if (incarnation == null) {
                olderFormat = true;
                deleteIfThere(paths.demotes() + "/" + directory, true);
            } else if (!incarnation.equals(self)) {
                candidates.add(incarnation);
            }
        }
        if (candidates.isEmpty() && !olderFormat) {
            return;
        }
        Set<Incarnation> marked = ZkIncarnations.inJournals(zk, client, paths);   // before the liveness
        Set<Incarnation> stale = new HashSet<>();
        for (Incarnation incarnation : candidates) {
            if (!marked.contains(incarnation) && !ZkIncarnations.isLive(zk, client, paths, incarnation)) {
                stale.add(incarnation);
            }
        }
        if (!stale.isEmpty() || olderFormat) {
            releaseGlocksOf(stale, olderFormat);
            staleSwept.addAndGet(stale.size());
        }
    }

    /**
     * Deletes every holder znode of the given incarnations (and, with {@code olderFormat}, every one that
     * names no incarnation), the znodes of every glock that is idle then, and their demote directories.
     */
    private void releaseGlocksOf(Set<Incarnation> dead, boolean olderFormat) throws IOException {
        for (String lock : childrenOrEmpty(paths.locks())) {
            String holders = paths.locks() + "/" + lock + "/holders";
            boolean released = false;
            for (String entry : childrenOrEmpty(holders)) {
                Incarnation holder = ZkPaths.holderIncarnation(ZkPaths.entryHolder(entry));
                if (holder == null ? olderFormat : dead.contains(holder)) {
                    deleteIfThere(holders + "/" + entry, false);
                    released = true;
                }
            }
            if (released) {
                ZkLockNodes.deleteIfIdle(zk, client, paths.locks() + "/" + lock);
            }
        }
        for (Incarnation incarnation : dead) {
            deleteIfThere(paths.demoteDir(incarnation), true);
        }
    }

    private void deleteIfThere(String path, boolean withChildren) throws IOException {
        try {
            zk.call("delete " + path, () -> {
                if (withChildren) {
                    client.delete().deletingChildrenIfNeeded().forPath(path);
                } else {
                    client.delete().forPath(path);
                }
                return null;
            });
        } catch (KeeperException.NoNodeException e) {
            // gone already
        } catch (KeeperException e) {
            throw new IOException("cannot delete " + path + ": " + e.getMessage(), e);
        }
    }

    private List<String> childrenOrEmpty(String dir) throws IOException {
        try {
            return zk.call("list " + dir, () -> client.getChildren().forPath(dir));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw new IOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
    }

    /** @return the slots that have a znode under {@code dir} (journals or members) */
    private Set<Integer> slots(String dir) throws IOException {
        Set<Integer> slots = new HashSet<>();
        for (String slot : childrenOrEmpty(dir)) {
            slots.add(Integer.parseInt(slot));
        }
        return slots;
    }

    /** Stops watching and recovering (a recovery running now finishes first). */
    @Override
    public void close() {
        worker.shutdown();
        if (watching && !fence.isFenced()) {
            try {
                zk.call("unwatch members", () -> {
                    client.watchers().remove(membersWatcher).ofType(Watcher.WatcherType.Any).forPath(paths.members());
                    return null;
                });
            } catch (KeeperException | IOException e) {
                // the session ends with the client anyway
            }
        }
        try {
            worker.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
