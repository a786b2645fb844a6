package dev.iomap.cluster;

import dev.iomap.spi.lock.LockTimeoutException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/** The time one request may still wait, and the waiting itself (timeout and interrupt as exceptions). */
final class ZkDeadline {
    /** Longer than any test or mount runs: waits that have no timeout of their own. */
    static final Duration FOREVER = Duration.ofDays(365L * 100);

    private final long endNanos;
    private final long startNanos = System.nanoTime();

    private ZkDeadline(long endNanos) {
        this.endNanos = endNanos;
    }

    /** @return nanoseconds since the request began to wait (for the {@code gfs2_promote} event) */
    long elapsedNanos() {
        return System.nanoTime() - startNanos;
    }

    /**
     * @param timeout how long, at least zero
     * @return a deadline that far from now
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    static ZkDeadline after(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("negative lock timeout " + timeout);
        }
        long nanos = timeout.compareTo(FOREVER) >= 0 ? TimeUnit.DAYS.toNanos(365L * 100) : timeout.toNanos();
        return new ZkDeadline(System.nanoTime() + nanos);
    }

    long remainingNanos() {
        return endNanos - System.nanoTime();
    }

    /** Waits for {@code changed} once (its lock held) unless the time is up. */
    @SuppressWarnings("WaitNotInLoop") // every caller re-checks its condition in a loop around this
    void await(Condition changed, String what) throws IOException {
        long remaining = remainingNanos();
        if (remaining <= 0) {
            throw new LockTimeoutException("timed out: " + what);
        }
        try {
            changed.awaitNanos(remaining);
        } catch (InterruptedException e) {
            throw interrupted(what, e);
        }
    }

    /** Waits for {@code latch} (a watch firing) unless the time is up. */
    void await(CountDownLatch latch, String what) throws IOException {
        long remaining = remainingNanos();
        if (remaining <= 0) {
            throw new LockTimeoutException("timed out: " + what);
        }
        try {
            if (!latch.await(remaining, TimeUnit.NANOSECONDS)) {
                throw new LockTimeoutException("timed out: " + what);
            }
        } catch (InterruptedException e) {
            throw interrupted(what, e);
        }
    }

    /** Takes {@code lock} unless the time is up first. */
    void lock(Lock lock, String what) throws IOException {
        try {
            if (!lock.tryLock(Math.max(0, remainingNanos()), TimeUnit.NANOSECONDS)) {
                throw new LockTimeoutException("timed out: " + what);
            }
        } catch (InterruptedException e) {
            throw interrupted(what, e);
        }
    }

    private static InterruptedIOException interrupted(String what, InterruptedException cause) {
        Thread.currentThread().interrupt();
        InterruptedIOException interrupted = new InterruptedIOException("interrupted: " + what);
        interrupted.initCause(cause);
        return interrupted;
    }
}
