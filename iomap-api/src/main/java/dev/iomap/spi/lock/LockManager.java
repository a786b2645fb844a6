package dev.iomap.spi.lock;

import java.io.IOException;
import java.time.Duration;

/**
 * The glock manager of one node (one mount): grants named locks in {@link LockMode}s to holders and
 * demotes holders whose mode conflicts with a request, through their {@link DemoteCallbacks}, before
 * granting it. The in-process implementation ({@code dev.iomap.adapter.support.lock}) is the embedded
 * default; a distributed one serves several nodes sharing one device. An adapter that uses glocks has
 * one per mount and depends on this interface only.
 *
 * <h2>Lock order</h2>
 * A thread that holds several locks takes them in this order, and releases in any order
 * (docs/design-notes.md, "Glocks"): the rename glock; inode glocks by increasing inode number;
 * resource-group glocks by increasing index; iopen glocks; then the journal transaction; the folio lock last. {@link LockName}'s
 * natural order is the glock part of it. A manager need not enforce it; the in-process one checks it
 * per thread when asked to (a debug mode), and a thread that takes locks out of order may deadlock
 * against another node (a waiting request stops at its timeout).
 *
 * <h2>Fairness, timeouts and interrupts</h2>
 * Requests for one name are served in arrival order; a request that must demote other holders
 * waits for their uses to end and blocks their new uses meanwhile. Every wait is bounded by the
 * caller's timeout and ends early on interrupt, with nothing granted; demote callbacks already
 * running are not interrupted (their duration counts against no timeout but the waiter's).
 *
 * <p>Thread-safe. After {@link #close()} {@link #acquire} throws {@link IllegalStateException}.
 */
public interface LockManager extends AutoCloseable {

    /**
     * Creates a holder of {@code name} and grants it {@code mode}, demoting the holders whose modes
     * conflict first, and starts one use of it (the handle's hold count is 1; end it with
     * {@link LockHandle#unlock}). Each call creates a separate holder, which conflicts with the
     * others like another node would; an adapter keeps one handle per name.
     *
     * @param name the lock
     * @param mode the mode wanted, not {@code UN}
     * @param callbacks what this holder does when demoted or released
     * @param timeout how long to wait at most; zero fails at once rather than wait for another thread
     * @return the handle, in a mode that covers {@code mode}
     * @throws LockTimeoutException if the mode was not granted in time
     * @throws java.io.InterruptedIOException if interrupted while waiting (the interrupt status is set)
     * @throws DemoteFailedException if another holder's callbacks failed
     * @throws LockOrderException if the manager checks the lock order and it is broken
     * @throws IllegalArgumentException if {@code mode} is {@code UN} or {@code timeout} is negative
     * @throws IllegalStateException if the manager is closed
     * @throws IOException as the subclasses above
     */
    LockHandle acquire(LockName name, LockMode mode, DemoteCallbacks callbacks, Duration timeout)
            throws IOException;

    /**
     * One lock of {@link #acquireAll}.
     *
     * @param name the lock
     * @param mode the mode wanted, not {@code UN}
     * @param callbacks what its holder does when demoted or released
     */
    record Request(LockName name, LockMode mode, DemoteCallbacks callbacks) {
    }

    /**
     * Acquires several locks as {@link #acquire} acquires each (a new holder per request, one use
     * started), in the order given, which is the lock order. A manager may grant in one request locks
     * that nobody holds or waits for, as the glocks of an inode just allocated; the default acquires them
     * one after the other, each waiting at most {@code timeout}. On failure nothing is left held: the
     * handles acquired already are unlocked and released, and the failure is thrown.
     *
     * @param requests the locks, in lock order
     * @param timeout how long each may wait at most
     * @return the handles, in the order of {@code requests}
     * @throws IOException as {@link #acquire}
     */
    default java.util.List<LockHandle> acquireAll(java.util.List<Request> requests, Duration timeout)
            throws IOException {
        java.util.List<LockHandle> handles = new java.util.ArrayList<>();
        try {
            for (Request r : requests) {
                handles.add(acquire(r.name(), r.mode(), r.callbacks(), timeout));
            }
            return handles;
        } catch (IOException | RuntimeException e) {
            for (LockHandle h : handles) {
                try {
                    h.unlock();
                    h.release();
                } catch (IOException | RuntimeException f) {
                    e.addSuppressed(f);
                }
            }
            throw e;
        }
    }

    /** @return this manager's counters so far */
    LockStats stats();

    /**
     * Counters of the lock service beyond {@link #stats()}, by name, since the manager was created: what
     * a distributed manager paid its coordination service (for example {@code zk.requests}, the
     * ZooKeeper requests sent, each one round trip). A snapshot; an adapter reports them with its own
     * counters. The default: none (an in-process manager sends no requests).
     *
     * @return counter name to value, in a stable order
     */
    default java.util.Map<String, Long> serviceCounters() {
        return java.util.Map.of();
    }

    /**
     * Releases every handle this manager created that is not released yet ({@link LockHandle#release},
     * callbacks included), for unmount. Idempotent.
     *
     * @throws IllegalStateException if a handle is still held (hold count above 0); nothing is released
     * @throws IOException from a release whose callbacks failed; the handles after it stay
     */
    @Override
    void close() throws IOException;
}
