package dev.iomap.cluster;

import java.io.IOException;
import java.io.Serial;
import java.time.Instant;

/**
 * A mount asked to join with a node id that a live incarnation of the filesystem's cluster holds:
 * another mount uses that id, or a mount that died has a ZooKeeper session that has not expired yet.
 * Nothing was changed in ZooKeeper. Give the mount another node id, or wait for the session to end.
 */
public final class NodeIdInUseException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** The live incarnation that holds the id. */
    private final transient Incarnation holder;

    /**
     * @param holder the live incarnation that holds the id
     * @param since when it joined
     */
    public NodeIdInUseException(Incarnation holder, Instant since) {
        super("node id " + holder.nodeId() + " is in use by a live mount of this filesystem (incarnation "
                + holder + ", since " + since + "): give this mount another node id; if that mount died, its"
                + " ZooKeeper session ends within its session timeout, and the id is free again");
        this.holder = holder;
    }

    /** @return the live incarnation that holds the id */
    public Incarnation holder() {
        return holder;
    }
}
