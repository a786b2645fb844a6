package dev.iomap.cluster;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.KeeperException;

/**
 * Runs one ZooKeeper request and counts it as a round trip: every synchronous Curator call (a
 * {@code multi} transaction is one) goes through here, so {@link #roundTrips()} is what a node paid
 * ZooKeeper. ZooKeeper's own errors pass through as {@link KeeperException} for the caller to read;
 * an interrupt becomes {@link InterruptedIOException} with the interrupt status set; anything else
 * becomes an {@link IOException} naming what was attempted. With a {@link Fence}, a request that failed
 * for want of a connection or a session ({@code ConnectionLoss}, {@code OperationTimeout},
 * {@code SessionExpired}) after the node's lease ended fails with the fence's typed error instead
 * ({@link LeaseExpiredException} or {@link NodeFencedException}, the ZooKeeper error as its cause): the
 * retries stopped because the lease is over, and that is what the caller must hear.
 */
final class ZkCalls {
    /** One synchronous ZooKeeper request. */
    @FunctionalInterface
    interface Call<T> {
        T run() throws Exception;
    }

    private final AtomicLong roundTrips = new AtomicLong();
    private final Fence fence;

    /** Requests with no fence: ZooKeeper's errors as they come. */
    ZkCalls() {
        this(null);
    }

    /** @param fence the node's fence, whose error replaces a connection error once the lease is over */
    ZkCalls(Fence fence) {
        this.fence = fence;
    }

    <T> T call(String what, Call<T> call) throws KeeperException, IOException {
        roundTrips.incrementAndGet();
        try {
            return call.run();
        } catch (KeeperException e) {
            failIfLeaseOver(e);
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException interrupted = new InterruptedIOException("interrupted: " + what);
            interrupted.initCause(e);
            throw interrupted;
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("ZooKeeper request failed: " + what + ": " + e, e);
        }
    }

    /** Like {@link #call} for callers that expect no ZooKeeper error: one becomes an {@link IOException}. */
    <T> T checked(String what, Call<T> call) throws IOException {
        try {
            return call(what, call);
        } catch (KeeperException e) {
            throw new IOException("ZooKeeper request failed: " + what + ": " + e.getMessage(), e);
        }
    }

    private void failIfLeaseOver(KeeperException e) throws IOException {
        boolean connection = switch (e.code()) {
            case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED -> true;
            default -> false;
        };
        if (fence == null || !connection) {
            return;
        }
        try {
            fence.check();
        } catch (IOException over) {
            over.initCause(e);
            throw over;
        }
    }

    /** @return the requests sent so far */
    long roundTrips() {
        return roundTrips.get();
    }
}
