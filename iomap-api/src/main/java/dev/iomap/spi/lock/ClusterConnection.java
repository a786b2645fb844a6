package dev.iomap.spi.lock;

import java.io.IOException;

/**
 * One mount's connection to a cluster service, made by a {@link ClusterJoinProvider}: the
 * {@link ClusterJoin} the adapter joins through, and what it holds open for that (e.g. a ZooKeeper
 * client, whose session is this node's life in the cluster). The mount owns it: it is closed after the
 * adapter has unmounted (and so left the cluster), or when the mount fails.
 */
public interface ClusterConnection extends AutoCloseable {

    /** @return how the mount joins; used for one mount only */
    ClusterJoin join();

    /** @return this node's id in the cluster, as the other nodes see it */
    String nodeId();

    /**
     * Closes the connection (a node that did not leave the cluster before is then taken for dead once
     * its session expires). Idempotent.
     *
     * @throws IOException if closing failed
     */
    @Override
    void close() throws IOException;
}
