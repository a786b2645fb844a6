package dev.iomap.adapter.support.lock;

import dev.iomap.spi.lock.LockTimeoutException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/** The time one request may still wait, and the waiting itself (timeout and interrupt as exceptions). */
final class Deadline {
    /** Longer than any test or mount runs: waits that have no timeout of their own. */
    static final Duration FOREVER = Duration.ofDays(365L * 100);

    private long remainingNanos;
    private final long startNanos = System.nanoTime();

    private Deadline(long remainingNanos) {
        this.remainingNanos = remainingNanos;
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
    static Deadline after(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("negative lock timeout " + timeout);
        }
        long nanos = timeout.compareTo(FOREVER) >= 0 ? TimeUnit.DAYS.toNanos(365L * 100) : timeout.toNanos();
        return new Deadline(nanos);
    }

    /**
     * Waits for {@code changed} once, holding its lock, unless the time is up.
     *
     * @param changed the condition signalled on every change
     * @param what what is waited for, for the messages
     * @throws LockTimeoutException if no time is left
     * @throws InterruptedIOException if interrupted (the interrupt status is set again)
     */
    @SuppressWarnings("WaitNotInLoop") // every caller re-checks its condition in a loop around this
    void await(Condition changed, String what) throws IOException {
        if (remainingNanos <= 0) {
            throw new LockTimeoutException("timed out: " + what);
        }
        try {
            remainingNanos = changed.awaitNanos(remainingNanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException interrupted = new InterruptedIOException("interrupted: " + what);
            interrupted.initCause(e);
            throw interrupted;
        }
    }
}
