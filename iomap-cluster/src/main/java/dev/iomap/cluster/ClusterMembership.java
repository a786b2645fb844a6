package dev.iomap.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * One mount's membership of a cluster filesystem: its {@link Incarnation} (the node id claimed with a
 * new number, {@code nodes/<node>}: refused while a live incarnation holds the id), the journal slot it
 * claimed (an ephemeral znode {@code members/<slot>} naming the incarnation, alive as long as its
 * ZooKeeper session), the journal's in-use marker ({@code journals/<slot>}, persistent, naming the
 * incarnation, deleted by a clean {@link #close}), its {@link Fence}, and the {@link ClusterRecovery}
 * that recovers dead incarnations' journals.
 *
 * <h2>Timing</h2>
 * A node writes only under its lease, which ends a fifth of the session timeout before the server can
 * expire the session (counted from a request the server answered, see {@link Fence}); the server deletes
 * the membership znode only when the session expired; survivors then wait {@code recoveryMargin} more
 * before replaying the dead node's journal. So a node has stopped issuing writes at least a fifth of the
 * session timeout plus the margin before anybody replays its journal or is granted its glocks (see
 * {@link Fence} for the limits of this argument). The fence trips for good when Curator reports the
 * session {@code LOST}.
 *
 * <p>Thread-safe. {@link #close} leaves the cluster cleanly: call it after the adapter flushed its
 * journal and released its glocks (closed the {@link ZkLockManager}); it does not close the client.
 */
public final class ClusterMembership implements AutoCloseable {
    private final CuratorFramework client;
    private final ZkPaths paths;
    private final Incarnation incarnation;
    /** The ZooKeeper session that joined: the owner of this incarnation's {@code nodes/<node>}. */
    private final long session;
    private final int slot;
    private final Fence fence;
    private final ClusterRecovery recovery;
    private final Incarnation recoveredOnJoin;
    private boolean closed;

    private ClusterMembership(CuratorFramework client, ZkPaths paths, Incarnation incarnation, long session, int slot,
            Fence fence, ClusterRecovery recovery, Incarnation recoveredOnJoin) {
        this.client = client;
        this.paths = paths;
        this.incarnation = incarnation;
        this.session = session;
        this.slot = slot;
        this.fence = fence;
        this.recovery = recovery;
        this.recoveredOnJoin = recoveredOnJoin;
    }

    /**
     * Joins: claims the node id for a new incarnation (refused, changing nothing, while a live one holds
     * it), claims the lowest free journal slot, recovers that journal first if a dead incarnation left it
     * in use (after {@code recoveryMargin}; this node id's own dead incarnation too), marks it in use by
     * this incarnation, deletes what stale incarnations left ({@link ClusterRecovery#sweepStale}), and
     * starts watching for dead members (a journal of this id's dead incarnation on another slot
     * included).
     *
     * @param client a started Curator client; its session is this node's membership
     * @param filesystem the shared filesystem's uuid
     * @param journals how many journal slots the filesystem has, at least 1
     * @param nodeId this mount's id, unique in the cluster (letters, digits, '-', '_')
     * @param replay the adapter's journal replay, for dead nodes' journals
     * @param recoveryMargin how long to wait after a node's session expired before replaying its
     *     journal: at least the longest write the device may still have in flight
     * @return the membership
     * @throws NodeIdInUseException if a live incarnation holds the node id: nothing was changed
     * @throws JournalSlotsTakenException if every slot is claimed by a live node (it says which)
     * @throws IOException if ZooKeeper is not reachable within the client's connection timeout, failed,
     *     or the recovery of the claimed slot failed (the claim is given up again)
     */
    public static ClusterMembership join(CuratorFramework client, UUID filesystem, int journals, String nodeId,
            JournalRecovery replay, Duration recoveryMargin) throws IOException {
        return join(client, filesystem, journals, nodeId, replay, recoveryMargin, FenceAgent.NONE);
    }

    /**
     * As {@link #join(CuratorFramework, UUID, int, String, JournalRecovery, Duration)}, fencing every dead
     * incarnation's host with {@code agent} before its journal is replayed (at the join and as a survivor).
     *
     * @param agent what keeps a dead incarnation's host off the storage ({@link FenceAgent})
     * @return the membership
     * @throws NodeIdInUseException if a live incarnation holds the node id: nothing was changed
     * @throws JournalSlotsTakenException if every slot is claimed by a live node (it says which)
     * @throws IOException as the other {@code join}, or if fencing the claimed slot's dead owner failed
     */
    public static ClusterMembership join(CuratorFramework client, UUID filesystem, int journals, String nodeId,
            JournalRecovery replay, Duration recoveryMargin, FenceAgent agent) throws IOException {
        Objects.requireNonNull(client, "client");
        ZkPaths.checkNodeId(nodeId);
        if (journals < 1) {
            throw new IllegalArgumentException("a cluster filesystem has at least 1 journal, not " + journals);
        }
        ZkPaths paths = new ZkPaths(filesystem);
        ZkCalls zk = new ZkCalls();
        try {
            if (!client.getZookeeperClient().blockUntilConnectedOrTimedOut()) {
                throw new IOException("no ZooKeeper reachable at "
                        + client.getZookeeperClient().getCurrentConnectionString()
                        + " within the connection timeout; is the server running?");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while connecting to ZooKeeper");
        }
        Fence fence = Fence.watching(client);
        long session = sessionId(client);
        Incarnation self = ZkIncarnations.claim(zk, client, paths, nodeId);
        byte[] id = self.toString().getBytes(StandardCharsets.UTF_8);
        int claimed = -1;
        ClusterRecovery recovery = null;
        boolean joined = false;
        try {
            claimed = claimSlot(zk, client, paths, journals, id);
            recovery = new ClusterRecovery(client, paths, self, replay, recoveryMargin, fence, agent);
            Incarnation recovered = null;
            if (ZkIncarnations.marker(zk, client, paths, claimed) != null) {
                sleep(recoveryMargin);   // its owner's session just expired: let its last writes land
                recovered = recovery.recoverSlot(claimed);
            }
            String marker = paths.journal(claimed);
            zk.checked("mark journal " + claimed + " in use", () -> client.create().creatingParentsIfNeeded()
                    .forPath(marker, id));
            recovery.sweepStale();
            recovery.start();
            joined = true;
            return new ClusterMembership(client, paths, self, session, claimed, fence, recovery, recovered);
        } finally {
            if (!joined) {
                if (recovery != null) {
                    recovery.close();
                }
                if (claimed >= 0) {
                    deleteQuietly(zk, client, paths.member(claimed));
                }
                deleteOwn(zk, client, paths.node(nodeId), session);
            }
        }
    }

    /**
     * @return the lowest journal slot this incarnation could claim ({@code members/<slot>} created)
     * @throws JournalSlotsTakenException if every slot is claimed
     */
    private static int claimSlot(ZkCalls zk, CuratorFramework client, ZkPaths paths, int journals, byte[] id)
            throws IOException {
        for (int slot = 0; slot < journals; slot++) {
            String member = paths.member(slot);
            try {
                zk.call("claim journal " + slot, () -> client.create().creatingParentsIfNeeded()
                        .withMode(CreateMode.EPHEMERAL).forPath(member, id));
                return slot;
            } catch (KeeperException.NodeExistsException e) {
                // taken: try the next
            } catch (KeeperException e) {
                throw new IOException("cannot claim journal " + slot + ": " + e.getMessage(), e);
            }
        }
        throw new JournalSlotsTakenException(journals, owners(zk, client, paths, journals));
    }

    /** @return the journal slot this mount owns */
    public int slot() {
        return slot;
    }

    /** @return this mount's node id */
    public String nodeId() {
        return incarnation.nodeId();
    }

    /** @return this mount's incarnation: what its holder entries, demote directory and journal marker name */
    public Incarnation incarnation() {
        return incarnation;
    }

    /** @return the fence the adapter checks before every device write */
    public Fence fence() {
        return fence;
    }

    /** @return the dead incarnation whose journal this mount recovered when it claimed the slot, or null */
    public Incarnation recoveredOnJoin() {
        return recoveredOnJoin;
    }

    /** @return the survivors' recovery run by this node (its counters) */
    public ClusterRecovery recovery() {
        return recovery;
    }

    /**
     * @return every live member: slot to node id (a few round trips)
     * @throws IOException if ZooKeeper failed
     */
    public Map<Integer, String> members() throws IOException {
        return owners(new ZkCalls(), client, paths, Integer.MAX_VALUE);
    }

    /**
     * Leaves cleanly: stops recovering others, deletes the journal's in-use marker (the journal is
     * clean: the adapter flushed it), then the membership znode and the node id's claim, and trips the
     * fence (this mount writes nothing more). Idempotent.
     *
     * @throws IOException if ZooKeeper failed; the marker may stay, and a survivor then replays the
     *     (clean) journal, which is harmless
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        recovery.close();
        boolean wasFenced = fence.isFenced();
        fence.trip("left the cluster");
        if (wasFenced) {
            return;   // our session may be gone: survivors recover the journal
        }
        ZkCalls zk = new ZkCalls();
        try {
            zk.call("unmark journal " + slot, () -> {
                client.delete().forPath(paths.journal(slot));
                return null;
            });
        } catch (KeeperException.NoNodeException e) {
            // recovered by someone already
        } catch (KeeperException e) {
            throw new IOException("cannot unmark journal " + slot + ": " + e.getMessage(), e);
        }
        deleteQuietly(zk, client, paths.member(slot));
        deleteOwn(zk, client, paths.node(incarnation.nodeId()), session);
    }

    /**
     * Deletes an ephemeral znode if {@code session} owns it: after that session expired, Curator goes on
     * with a new one, and the znode may by then be another incarnation's.
     */
    private static void deleteOwn(ZkCalls zk, CuratorFramework client, String path, long session) {
        try {
            Stat stat = new Stat();
            if (ZkIncarnations.read(zk, client, path, stat) != null && stat.getEphemeralOwner() == session) {
                deleteQuietly(zk, client, path);
            }
        } catch (IOException e) {
            // ephemeral: goes with the session anyway
        }
    }

    private static long sessionId(CuratorFramework client) throws IOException {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            throw new IOException("cannot read the ZooKeeper session of " + client + ": " + e, e);
        }
    }

    private static Map<Integer, String> owners(ZkCalls zk, CuratorFramework client, ZkPaths paths, int journals)
            throws IOException {
        Map<Integer, String> owners = new HashMap<>();
        java.util.List<String> slots;
        try {
            slots = zk.call("list members", () -> client.getChildren().forPath(paths.members()));
        } catch (KeeperException.NoNodeException e) {
            return owners;
        } catch (KeeperException e) {
            throw new IOException("cannot list members: " + e.getMessage(), e);
        }
        for (String name : slots) {
            int slot = Integer.parseInt(name);
            String owner = readOrNull(zk, client, paths.member(slot));
            if (owner != null && slot < journals) {
                Incarnation incarnation = Incarnation.parseOrNull(owner);
                owners.put(slot, incarnation == null ? owner : incarnation.nodeId());
            }
        }
        return owners;
    }

    private static String readOrNull(ZkCalls zk, CuratorFramework client, String path) throws IOException {
        try {
            return new String(zk.call("read " + path, () -> client.getData().forPath(path)), StandardCharsets.UTF_8);
        } catch (KeeperException.NoNodeException e) {
            return null;
        } catch (KeeperException e) {
            throw new IOException("cannot read " + path + ": " + e.getMessage(), e);
        }
    }

    private static void deleteQuietly(ZkCalls zk, CuratorFramework client, String path) {
        try {
            zk.call("delete " + path, () -> {
                client.delete().forPath(path);
                return null;
            });
        } catch (KeeperException | IOException e) {
            // ephemeral: goes with the session anyway
        }
    }

    private static void sleep(Duration duration) throws IOException {
        try {
            Thread.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting the recovery margin");
        }
    }
}
