package dev.iomap.cluster;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;

/**
 * A node's self-fence: once tripped, for good, {@link #check} throws {@link NodeFencedException}. An
 * adapter calls {@link #check} before every write it issues to the shared device; the cluster lock
 * manager checks it before every ZooKeeper request and every lock use.
 *
 * <h2>Why fencing at SUSPENDED is early enough</h2>
 * With a session timeout {@code T}, the ZooKeeper client pings every {@code T/3} and declares the
 * connection lost when it heard nothing for {@code 2T/3}; Curator then reports
 * {@link ConnectionState#SUSPENDED}, and this fence trips (also on {@code LOST}, and whenever
 * {@link #check} finds the client not connected). The server expires the session only after it heard
 * nothing for {@code T}, and only then deletes the node's ephemeral membership znode, which is what
 * makes survivors consider it dead. So the node stops issuing writes at the latest {@code 2T/3} after
 * its last contact, while survivors start looking at it no earlier than {@code T} after it; survivors
 * then wait a further {@code recovery margin} (see {@link ClusterMembership}) so that writes the node
 * issued just before fencing have reached the device before its journal is replayed. The limit, as
 * for every lease without storage-level fencing (GFS2 uses STONITH for this): a node paused (GC,
 * suspend) for longer than {@code T/3} plus the margin between {@link #check} and its write could still
 * write late. Keep the margin above the longest device write.
 *
 * <p>Thread-safe.
 */
public final class Fence {
    private final AtomicReference<String> reason = new AtomicReference<>();
    private final CuratorFramework client;

    private Fence(CuratorFramework client) {
        this.client = client;
    }

    /**
     * @param client the node's ZooKeeper client
     * @return a fence that trips when {@code client} reports {@code SUSPENDED} or {@code LOST}, or is
     *     found not connected by {@link #check}
     */
    public static Fence watching(CuratorFramework client) {
        Fence fence = new Fence(Objects.requireNonNull(client, "client"));
        ConnectionStateListener listener = (c, state) -> {
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                fence.trip("the ZooKeeper connection is " + state);
            }
        };
        client.getConnectionStateListenable().addListener(listener);
        return fence;
    }

    /** @return a fence tied to no client, tripped only by {@link #trip} (single node, tests) */
    public static Fence manual() {
        return new Fence(null);
    }

    /**
     * Trips the fence; the first reason is kept.
     *
     * @param why the reason, for the exception message
     */
    public void trip(String why) {
        reason.compareAndSet(null, why + " (fenced at " + java.time.Instant.now() + ")");
    }

    /** @return whether the fence tripped */
    public boolean isFenced() {
        return reason.get() != null || (client != null && !client.getZookeeperClient().isConnected()
                && tripNotConnected());
    }

    private boolean tripNotConnected() {
        trip("the ZooKeeper client is not connected");
        return true;
    }

    /**
     * Call before every device write.
     *
     * @throws NodeFencedException if the node fenced itself: it must not write any more
     */
    public void check() throws NodeFencedException {
        if (isFenced()) {
            throw new NodeFencedException("this node fenced itself and writes nothing more to the shared device: "
                    + reason.get() + "; unmount, the other nodes recover its journal");
        }
    }

    /** @return the reason the fence tripped, or null */
    public String reason() {
        return reason.get();
    }
}
