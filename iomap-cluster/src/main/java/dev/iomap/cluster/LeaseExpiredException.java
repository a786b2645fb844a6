package dev.iomap.cluster;

import java.io.IOException;
import java.io.Serial;

/**
 * This node's lease ran out: ZooKeeper has not answered it for so long that the server may soon expire
 * its session (see {@link Fence}), so it writes nothing to the shared device and grants itself nothing
 * until an answer renews the lease. Unlike {@link NodeFencedException} it does not shut the mount down:
 * the operation that got it fails (EIO), and if the connection comes back within the same session the
 * next operation goes on as usual; if the session is lost instead, the node fences itself for good.
 */
public final class LeaseExpiredException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message how long ZooKeeper has not answered, and what the node does about it */
    public LeaseExpiredException(String message) {
        super(message);
    }
}
