package dev.iomap.spi.lock;

import java.io.IOException;

/**
 * What a holder does when its lock goes to a weaker mode: GFS2's {@code go_sync} and
 * {@code go_inval} of a glock's operations. The manager calls them, in this order, for every such
 * transition, whether another holder asked for an incompatible mode (a demotion) or the holder
 * released the lock:
 * <ol>
 *   <li>{@link #sync} when the lock leaves {@link LockMode#EX} (the only mode with dirty data);</li>
 *   <li>{@link #invalidate} when the lock goes from a mode that allows caching ({@code SH},
 *       {@code EX}) to one that does not ({@code UN}, {@code DF}); an {@code EX} to {@code SH}
 *       demotion keeps the cache, which is still valid for a sharer.</li>
 * </ol>
 * The manager changes the mode only after the last of them returned normally, so no other holder is
 * granted a conflicting mode while this holder may still have data the other would not see (the
 * release cannot overtake the callback). If one throws, the transition does not happen: the holder
 * keeps its mode, and whoever caused the transition gets a {@link DemoteFailedException}.
 *
 * <p>The callbacks run on a thread of the manager's choosing (the in-process manager uses the thread
 * of the request that caused them), while nobody holds the lock (its hold count is 0) and new holds of
 * it wait. They must not lock the handle being demoted, and must not wait for anything that waits
 * for that lock; they may take locks that come after it in the lock order ({@link LockName}).
 */
public interface DemoteCallbacks {

    /**
     * Makes everything written under the lock durable where the next holder will read it
     * ({@code go_sync}): for an inode, flush the log and write back and wait the inode's dirty data
     * ({@link dev.iomap.spi.IomapInode#writeAndWait}). Called only when the lock leaves {@code EX}.
     *
     * @param name the lock
     * @param from the mode the holder has now ({@code EX})
     * @param to the mode the lock goes to
     * @throws IOException if the data could not be written; the holder keeps its mode
     */
    void sync(LockName name, LockMode from, LockMode to) throws IOException;

    /**
     * Drops what the holder cached under the lock ({@code go_inval}): for an inode, its cached folios
     * ({@link dev.iomap.spi.IomapInode#invalidateCache}) and metadata. Called after {@link #sync},
     * when the lock goes from {@code SH} or {@code EX} to {@code UN} or {@code DF}.
     *
     * @param name the lock
     * @param from the mode the holder has now
     * @param to the mode the lock goes to
     * @return how many cache pages were dropped, which the manager adds to
     *     {@link LockStats#pagesInvalidated()}
     * @throws IOException if the cache could not be dropped; the holder keeps its mode
     */
    long invalidate(LockName name, LockMode from, LockMode to) throws IOException;

    /**
     * Runs what a transition from {@code from} to {@code to} calls, in the order and under the
     * conditions above: {@link #sync} when leaving {@code EX} (and {@code sync} is true), then
     * {@link #invalidate} when going from a caching mode to one that does not cache. Every lock manager
     * runs its holders' callbacks through this, so they all follow the same rule.
     *
     * @param callbacks the holder's callbacks
     * @param name the lock
     * @param from the mode the holder has now
     * @param to the mode the lock goes to
     * @param sync false only for a holder that must not write any more (a fenced cluster node, whose
     *     dirty data is lost with it); its cache is still dropped
     * @return the pages {@link #invalidate} dropped, 0 if it was not called
     * @throws IOException from a callback; the holder keeps its mode
     * @throws IllegalStateException if {@link #invalidate} returned a negative count
     */
    static long transition(DemoteCallbacks callbacks, LockName name, LockMode from, LockMode to, boolean sync)
            throws IOException {
        if (sync && from == LockMode.EX && to != LockMode.EX) {
            callbacks.sync(name, from, to);
        }
        if (!from.allowsCaching() || to.allowsCaching()) {
            return 0;
        }
        long pages = callbacks.invalidate(name, from, to);
        if (pages < 0) {
            throw new IllegalStateException("invalidate of " + name + " returned " + pages + " pages");
        }
        return pages;
    }
}
