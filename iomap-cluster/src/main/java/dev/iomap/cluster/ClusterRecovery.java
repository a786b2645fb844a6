package dev.iomap.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
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

/**
 * The survivors' side of a node's death. A journal whose in-use marker ({@code journals/<slot>}) names
 * a node that has no membership znode any more belongs to a dead node (a clean unmount deletes the
 * marker before its membership). For every such journal, after the recovery margin, this node takes
 * the journal's recovery lock (a Curator {@link InterProcessMutex}, lock znodes under
 * {@code recovery/<slot>}), checks again that the journal is still unrecovered, runs the adapter's
 * {@link JournalRecovery}, then deletes every holder znode of the dead node (its glocks: requests that
 * waited for them are granted now) and its demote directory, and last the marker.
 *
 * <p>It watches the membership directory (one persistent watch) and looks again at every change.
 * Several survivors may race: the recovery lock and the re-check make one of them recover each journal
 * once. A node that claims the slot of a dead node recovers it itself before using it
 * ({@link #recoverSlot}).
 *
 * <p>Thread-safe; recoveries run on one thread of its own.
 */
public final class ClusterRecovery implements AutoCloseable {
    private final CuratorFramework client;
    private final ZkPaths paths;
    private final String selfNodeId;
    private final JournalRecovery replay;
    private final Duration margin;
    private final Fence fence;
    private final ZkCalls zk = new ZkCalls();
    private final ScheduledThreadPoolExecutor worker;
    private final Set<Integer> scheduled = new HashSet<>();
    private final Watcher membersWatcher = event -> scheduleScan();
    private final AtomicLong recovered = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile boolean watching;

    /**
     * @param client this node's started client
     * @param paths the filesystem's znodes
     * @param selfNodeId this node's id
     * @param replay the adapter's journal replay
     * @param margin how long to wait after a node was found dead before recovering it
     * @param fence this node's fence: a fenced node recovers nobody
     */
    ClusterRecovery(CuratorFramework client, ZkPaths paths, String selfNodeId, JournalRecovery replay,
            Duration margin, Fence fence) {
        this.client = client;
        this.paths = paths;
        this.selfNodeId = selfNodeId;
        this.replay = Objects.requireNonNull(replay, "replay");
        this.margin = Objects.requireNonNull(margin, "margin");
        this.fence = fence;
        this.worker = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "iomap-cluster-recovery-" + selfNodeId);
            t.setDaemon(true);
            return t;
        });
        worker.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Starts watching the members and looks for dead nodes' journals now. */
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
            Map<Integer, String> markers = children(paths.journals());
            Map<Integer, String> members = children(paths.members());
            for (Map.Entry<Integer, String> marker : markers.entrySet()) {
                int slot = marker.getKey();
                if (!members.containsKey(slot) && scheduledNew(slot)) {
                    worker.schedule(() -> recoverLater(slot), margin.toNanos(), TimeUnit.NANOSECONDS);
                }
            }
        } catch (IOException | KeeperException e) {
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
            scheduleScan();
        }
    }

    /**
     * Recovers journal {@code slot} if its marker names a node that is not a live member (or this node
     * claimed the slot): under the slot's recovery lock, replay, release the dead node's glocks, delete
     * the marker. Does nothing if the journal is clean or a live node owns it.
     *
     * @param slot the journal slot
     * @return the id of the node whose journal was recovered, or null if there was nothing to do
     * @throws IOException if the replay or ZooKeeper failed; the dead node's glocks stay held
     */
    String recoverSlot(int slot) throws IOException {
        fence.check();
        InterProcessMutex mutex = new InterProcessMutex(client, paths.recoveryLock(slot));
        zk.checked("take recovery lock of journal " + slot, () -> {
            mutex.acquire();
            return null;
        });
        try {
            String dead = dataOrNull(paths.journal(slot));
            if (dead == null || dead.equals(selfNodeId)) {
                return null;
            }
            String member = dataOrNull(paths.member(slot));
            if (member != null && !member.equals(selfNodeId)) {
                return null;   // a live node claimed it and recovers it itself
            }
            fence.check();
            replay.replay(slot, dead);
            releaseGlocksOf(dead);
            zk.checked("delete marker of journal " + slot, () -> {
                client.delete().forPath(paths.journal(slot));
                return null;
            });
            recovered.incrementAndGet();
            return dead;
        } finally {
            zk.checked("release recovery lock of journal " + slot, () -> {
                mutex.release();
                return null;
            });
        }
    }

    /** Deletes every holder znode of {@code deadNodeId} and its demote directory. */
    private void releaseGlocksOf(String deadNodeId) throws IOException {
        List<String> names;
        try {
            names = zk.call("list locks", () -> client.getChildren().forPath(paths.locks()));
        } catch (KeeperException.NoNodeException e) {
            names = List.of();
        } catch (KeeperException e) {
            throw new IOException("cannot list glocks: " + e.getMessage(), e);
        }
        for (String name : names) {
            String holders = paths.locks() + "/" + name + "/holders";
            List<String> entries;
            try {
                entries = zk.call("list " + holders, () -> client.getChildren().forPath(holders));
            } catch (KeeperException.NoNodeException e) {
                continue;
            } catch (KeeperException e) {
                throw new IOException("cannot list " + holders + ": " + e.getMessage(), e);
            }
            for (String entry : entries) {
                if (ZkPaths.holderNode(ZkPaths.entryHolder(entry)).equals(deadNodeId)) {
                    deleteIfThere(holders + "/" + entry, false);
                }
            }
        }
        deleteIfThere(paths.demoteDir(deadNodeId), true);
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

    private Map<Integer, String> children(String dir) throws IOException, KeeperException {
        Map<Integer, String> byslot = new HashMap<>();
        List<String> slots;
        try {
            slots = zk.call("list " + dir, () -> client.getChildren().forPath(dir));
        } catch (KeeperException.NoNodeException e) {
            return byslot;
        }
        for (String slot : slots) {
            String data = dataOrNull(dir + "/" + slot);
            if (data != null) {
                byslot.put(Integer.parseInt(slot), data);
            }
        }
        return byslot;
    }

    private String dataOrNull(String path) throws IOException {
        try {
            byte[] data = zk.call("read " + path, () -> client.getData().forPath(path));
            return new String(data, StandardCharsets.UTF_8);
        } catch (KeeperException.NoNodeException e) {
            return null;
        } catch (KeeperException e) {
            throw new IOException("cannot read " + path + ": " + e.getMessage(), e);
        }
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
