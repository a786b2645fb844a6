package dev.iomap.spi.lock;

import java.io.IOException;
import java.time.Duration;

/**
 * One holder's glock: the mode this holder has the lock in, kept (cached) between uses until another
 * holder needs an incompatible mode or this holder releases it, and the count of uses in progress
 * (holds). GFS2 keeps one glock per name per node and queues its local users on it; an adapter
 * likewise keeps one handle per name and brackets every operation that touches what the lock
 * covers with {@link #lock} and {@link #unlock}.
 *
 * <p>A demotion waits until the hold count is 0, and while it is pending new {@link #lock} calls
 * wait (so a stream of local uses cannot starve another holder); then the manager runs this
 * holder's {@link DemoteCallbacks} and only after they return lowers the mode. A later
 * {@link #lock} asks the manager again for the mode it needs.
 *
 * <p>A use that needs a mode this holder's mode does not cover changes the mode only once no use of
 * another thread that the new mode does not cover is in progress ({@code SH} to {@code DF}, {@code DF}
 * to {@code SH}; an upgrade to {@code EX} covers every use), as GFS2 changes a glock's state only with
 * no holder granted; new uses wait meanwhile.
 *
 * <p>Thread-safe: several threads may hold one handle at once; a thread locks names in the lock order
 * ({@link LockName}). A thread may start a use inside a use of its own (nested): with {@link #lock},
 * one the mode covers starts at once, even while a demotion or a change of mode is pending (they wait for the thread's
 * uses, so it must not wait for them); one that needs another mode asks for it, and neither that change
 * nor another thread's waits for the uses of a thread waiting for it (its outer uses may see the mode
 * change under them: an upgrade to {@code EX} is the one that changes nothing they rely on). After
 * {@link #release} every method but {@link #name}, {@link #mode} and {@link #holds} throws
 * {@link IllegalStateException}.
 */
public interface LockHandle {

    /** @return the lock's name */
    LockName name();

    /** @return the mode this holder has the lock in now ({@code UN} once demoted to nothing or released) */
    LockMode mode();

    /** @return the uses in progress: {@link #lock}s (and the initial acquire) not yet unlocked */
    int holds();

    /**
     * Starts a use of the lock in at least {@code mode}: at once if this holder already has a mode
     * that {@linkplain LockMode#covers covers} it and no demotion is pending, else after the manager
     * granted it (demoting other holders first). Every successful call is matched by one
     * {@link #unlock}.
     *
     * @param mode the mode the use needs, not {@code UN}
     * @param timeout how long to wait at most; zero fails at once rather than wait for another thread
     * @throws LockTimeoutException if the mode was not granted in time; nothing was granted
     * @throws java.io.InterruptedIOException if the thread was interrupted while waiting (its
     *     interrupt status is set again); nothing was granted
     * @throws DemoteFailedException if another holder's callbacks failed; nothing was granted
     * @throws LockOrderException if the manager checks the lock order and this thread holds a name
     *     that is not smaller
     * @throws IllegalArgumentException if {@code mode} is {@code UN} or {@code timeout} is negative
     * @throws IllegalStateException if the handle was released, or the calling thread is running this
     *     handle's demote callbacks
     * @throws IOException as the subclasses above
     */
    void lock(LockMode mode, Duration timeout) throws IOException;

    /**
     * Starts a use of the lock in at least {@code mode} only if that needs nothing from the manager:
     * this holder has a mode that {@linkplain LockMode#covers covers} it and no demotion (nor another
     * request of this holder) is pending. It never waits and never runs anybody's callbacks, so a
     * thread that holds things a demotion's callbacks wait for (locked folios: readahead) may call
     * it. A successful call is matched by one {@link #unlock}. The default starts nothing, which is
     * always allowed: the caller then does without the lock (readahead leaves its folios to readers).
     *
     * @param mode the mode the use needs, not {@code UN}
     * @return whether a use was started
     * @throws IllegalArgumentException if {@code mode} is {@code UN}
     * @throws IllegalStateException if the handle was released
     */
    default boolean lockIfCached(LockMode mode) {
        if (mode == LockMode.UN) {
            throw new IllegalArgumentException("a use needs a mode other than UN");
        }
        return false;
    }

    /**
     * Ends one use. The mode stays (cached) until a demotion or {@link #release}; if a demotion waits
     * for this holder and this was the last use, it proceeds now.
     *
     * @throws IllegalStateException if the hold count is already 0, or the handle was released
     */
    void unlock();

    /**
     * Gives the lock up: runs this holder's {@link DemoteCallbacks} for the transition to {@code UN}
     * (sync if the mode is {@code EX}, invalidate if it allows caching), then drops the handle. Waits
     * for a demotion of this handle already running to finish first.
     *
     * @throws DemoteFailedException if a callback failed; the handle stays, in its mode
     * @throws java.io.InterruptedIOException if interrupted while waiting for a running demotion
     * @throws IllegalStateException if the hold count is not 0, or the handle was already released
     * @throws IOException as the subclasses above
     */
    void release() throws IOException;
}
