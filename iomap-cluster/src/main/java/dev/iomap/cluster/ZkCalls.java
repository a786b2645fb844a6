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
 * becomes an {@link IOException} naming what was attempted.
 */
final class ZkCalls {
    /** One synchronous ZooKeeper request. */
    @FunctionalInterface
    interface Call<T> {
        T run() throws Exception;
    }

    private final AtomicLong roundTrips = new AtomicLong();

    <T> T call(String what, Call<T> call) throws KeeperException, IOException {
        roundTrips.incrementAndGet();
        try {
            return call.run();
        } catch (KeeperException e) {
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

    /** @return the requests sent so far */
    long roundTrips() {
        return roundTrips.get();
    }
}
