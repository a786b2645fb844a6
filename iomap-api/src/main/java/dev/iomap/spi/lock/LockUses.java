package dev.iomap.spi.lock;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The uses in progress of one {@link LockHandle}, by thread and by the mode each use asked for: what a
 * handle needs to change its mode only when no use it would not {@linkplain LockMode#covers cover} is in
 * progress, without waiting for the calling thread itself or for a thread that is itself waiting for a
 * change of the same handle (both would deadlock).
 *
 * <p>A thread's uses end in the reverse order they started (a use ends in the thread that started it,
 * the inner one first). An {@link #end} in a thread that has no use ends the newest use of another
 * thread: a use handed from one thread to another keeps the counts right, though not its thread.
 *
 * <p>Not thread-safe: the handle guards it with its own lock.
 */
public final class LockUses {
    /** The uses of one thread, newest last, and whether it waits for a change of the handle. */
    private static final class OfThread {
        final ArrayDeque<LockMode> modes = new ArrayDeque<>();
        boolean waitsForChange;
    }

    private final Map<Thread, OfThread> byThread = new HashMap<>();
    private int total;

    /** An empty set: no use in progress. */
    public LockUses() {
    }

    /**
     * Records a use that the calling thread starts.
     *
     * @param mode the mode the use asked for
     */
    public void start(LockMode mode) {
        byThread.computeIfAbsent(Thread.currentThread(), t -> new OfThread()).modes.addLast(mode);
        total++;
    }

    /**
     * Ends the calling thread's newest use, or, if it has none, another thread's newest use (a use
     * handed over).
     *
     * @throws IllegalStateException if no use is in progress
     */
    public void end() {
        Thread thread = Thread.currentThread();
        OfThread uses = byThread.get(thread);
        if (uses == null || uses.modes.isEmpty()) {
            var any = byThread.entrySet().stream().filter(e -> !e.getValue().modes.isEmpty()).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no use in progress to end"));
            thread = any.getKey();
            uses = any.getValue();
        }
        uses.modes.removeLast();
        total--;
        if (uses.modes.isEmpty() && !uses.waitsForChange) {
            byThread.remove(thread);
        }
    }

    /** @return the uses in progress, of every thread */
    public int total() {
        return total;
    }

    /** @return whether the calling thread has a use in progress (a use it starts now is nested) */
    public boolean heldByCurrentThread() {
        OfThread uses = byThread.get(Thread.currentThread());
        return uses != null && !uses.modes.isEmpty();
    }

    /**
     * Marks whether the calling thread, inside a use, waits for a change of the handle's mode (its own
     * or another thread's): a change waits for no use of such a thread ({@link #othersNotCovered}), since
     * that thread waits for the change in turn.
     *
     * @param waiting whether it waits from now on
     */
    public void waitForChange(boolean waiting) {
        Thread thread = Thread.currentThread();
        if (waiting) {
            byThread.computeIfAbsent(thread, t -> new OfThread()).waitsForChange = true;
            return;
        }
        OfThread uses = byThread.get(thread);
        if (uses != null) {
            uses.waitsForChange = false;
            if (uses.modes.isEmpty()) {
                byThread.remove(thread);
            }
        }
    }

    /**
     * @param wanted the mode the handle is about to change to
     * @return whether a use that {@code wanted} does not {@linkplain LockMode#covers cover} is in progress
     *     in a thread other than the calling one that is not waiting for a change itself: the change must
     *     wait for it to end
     */
    public boolean othersNotCovered(LockMode wanted) {
        Thread self = Thread.currentThread();
        for (Map.Entry<Thread, OfThread> e : byThread.entrySet()) {
            if (e.getKey() == self || e.getValue().waitsForChange) {
                continue;
            }
            for (LockMode mode : e.getValue().modes) {
                if (!wanted.covers(mode)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Forgets every use (the handle's holder is gone: a dead node). */
    public void clear() {
        byThread.clear();
        total = 0;
    }
}
