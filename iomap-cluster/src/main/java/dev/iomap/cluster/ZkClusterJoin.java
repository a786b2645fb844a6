package dev.iomap.cluster;

import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.ClusterJoin;
import dev.iomap.spi.lock.LockManager;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;

/**
 * How one mount joins a ZooKeeper cluster: a {@link ClusterJoin} for an adapter's cluster mode (gfs2-like's
 * {@code new Gfs2LikeAdapter(join)}), one per node. Joining claims a journal slot with
 * {@link ClusterMembership#join} (recovering dead nodes' journals through the adapter's replay) and starts a
 * {@link ZkLockManager} on the same client, node id and fence. The context's {@code checkWrite} is the
 * membership's fence; closing it leaves the cluster cleanly. The client is the caller's: it is not closed.
 */
public final class ZkClusterJoin implements ClusterJoin {
    private final CuratorFramework client;
    private final String nodeId;
    private final Duration recoveryMargin;
    private final FenceAgent agent;

    /**
     * @param client a started Curator client whose session is this node's
     * @param nodeId this mount's id, unique in the cluster (letters, digits, '-', '_')
     * @param recoveryMargin how long survivors wait after a node's session expired before replaying its
     *     journal (see {@link ClusterMembership#join})
     */
    public ZkClusterJoin(CuratorFramework client, String nodeId, Duration recoveryMargin) {
        this(client, nodeId, recoveryMargin, FenceAgent.NONE);
    }

    /**
     * @param client a started Curator client whose session is this node's
     * @param nodeId this mount's id, unique in the cluster (letters, digits, '-', '_')
     * @param recoveryMargin how long survivors wait after a node's session expired before replaying its
     *     journal (see {@link ClusterMembership#join})
     * @param agent what fences a dead node's host before its journal is replayed ({@link FenceAgent})
     */
    public ZkClusterJoin(CuratorFramework client, String nodeId, Duration recoveryMargin, FenceAgent agent) {
        this.client = Objects.requireNonNull(client, "client");
        this.nodeId = ZkPaths.checkNodeId(nodeId);
        this.recoveryMargin = Objects.requireNonNull(recoveryMargin, "recoveryMargin");
        this.agent = Objects.requireNonNull(agent, "agent");
    }

    /**
     * @param filesystemId the adapter's name for the filesystem: its UUID (gfs2-like's, written at mkfs),
     *     which keys its znode subtree; anything else is keyed by its name-based UUID
     *     ({@link UUID#nameUUIDFromBytes}), which two filesystems that name themselves alike share
     * @throws NodeIdInUseException if a live mount holds this node id: nothing was changed
     * @throws JournalSlotsTakenException if every slot is held by a live node
     * @throws IOException if ZooKeeper cannot be reached or a recovery failed
     */
    @Override
    public ClusterContext join(String filesystemId, int journals, JournalReplay recovery) throws IOException {
        UUID uuid = key(filesystemId);
        ClusterMembership membership = ClusterMembership.join(client, uuid, journals, nodeId,
                (slot, dead) -> recovery.replay(slot), recoveryMargin, agent);
        ZkLockManager manager;
        try {
            manager = new ZkLockManager(client, uuid, membership.incarnation(), membership.fence());
        } catch (IOException | RuntimeException e) {
            try {
                membership.close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return new Context(membership, manager);
    }

    /** @return the filesystem's UUID if {@code filesystemId} is one, else its name-based UUID */
    static UUID key(String filesystemId) {
        try {
            UUID uuid = UUID.fromString(filesystemId);
            if (uuid.toString().equals(filesystemId)) {
                return uuid;
            }
        } catch (IllegalArgumentException e) {
            // not a UUID: a name
        }
        return UUID.nameUUIDFromBytes(filesystemId.getBytes(StandardCharsets.UTF_8));
    }

    /** One node's membership and lock manager. */
    private static final class Context implements ClusterContext {
        private final ClusterMembership membership;
        private final ZkLockManager manager;

        Context(ClusterMembership membership, ZkLockManager manager) {
            this.membership = membership;
            this.manager = manager;
        }

        @Override
        public LockManager lockManager() {
            return manager;
        }

        @Override
        public int journal() {
            return membership.slot();
        }

        /** @return the recovery's counters ({@link ClusterRecovery#counters}) */
        @Override
        public java.util.Map<String, Long> counters() {
            return membership.recovery().counters();
        }

        /** @throws NodeFencedException once the node's session was lost */
        @Override
        public void checkWrite() throws IOException {
            membership.fence().check();
        }

        @Override
        public void close() throws IOException {
            membership.close();
        }

        @Override
        public String toString() {
            return "node " + membership.incarnation() + " in journal " + membership.slot();
        }
    }
}
