package dev.iomap.cluster;

import dev.iomap.api.FileSystemShutdownException;
import java.io.Serial;

/**
 * This node lost (or may have lost) its ZooKeeper session, so other nodes may soon consider it dead
 * and recover its journal: it fenced itself and must not write to the shared device any more. Like
 * every {@link FileSystemShutdownException}, every later write of the mount fails with it. Unmount;
 * a new mount joins the cluster again (after the survivors recovered this node's journal).
 */
public final class NodeFencedException extends FileSystemShutdownException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message why the node fenced itself and when */
    public NodeFencedException(String message) {
        super(message);
    }
}
