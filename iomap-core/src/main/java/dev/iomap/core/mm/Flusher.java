package dev.iomap.core.mm;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Background writeback of one {@code IomapCache}: the kernel's flusher thread ({@code wb_workfn}).
 * It wakes every {@code writebackInterval}, or at once when dirty data passes the background
 * threshold, and writes back every inode while dirty bytes stay above that threshold, then any folio
 * dirty for longer than {@code dirtyExpire}; then it reclaims if the cache is over budget. Writers
 * past the hard dirty limit wait in {@link #throttle} until writeback brings the total back under it.
 */
public final class Flusher implements Runnable {
    private final WritebackDomain cache;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Condition progress = lock.newCondition();
    private Thread thread;
    private boolean kicked;
    /** When the last pass over expired data began ({@link System#nanoTime()}); flusher thread only. */
    private long lastOldDataFlush = System.nanoTime();
    private volatile boolean stopping;
    /** Writers waiting in {@link #throttle}: only then does ended writeback signal progress. */
    private final AtomicInteger throttled = new AtomicInteger();

    /** @param cache the mappings this flusher writes back; null for a flusher that is never started */
    public Flusher(WritebackDomain cache) {
        this.cache = cache;
    }

    /** Starts the flusher thread, unless it runs or was stopped. */
    public synchronized void start() {
        if (thread != null || stopping) {
            return;
        }
        thread = Thread.ofPlatform().daemon().name("iomap-flusher").start(this);
    }

    /** @return whether the flusher thread was started and not stopped */
    public boolean isRunning() {
        return thread != null && !stopping;
    }

    /** Wakes the flusher now (the kernel's {@code wb_wakeup}). */
    public void kick() {
        lock.lock();
        try {
            kicked = true;
            work.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits, at most {@code maxWait}, for writeback to make progress (the kernel's
     * {@code balance_dirty_pages} pause), unless {@code stillOver} says, under the lock that
     * {@link #wakeThrottled} signals under, that it already has: a wake-up sent after this writer
     * counted itself in {@link #hasThrottled} but before it waited would otherwise be lost, and the
     * writer would sleep the whole pause with its limit already met.
     *
     * @param maxWait the longest pause
     * @param stillOver whether the writer is still over its limit; checked once, after the writer is
     *     counted as throttled
     */
    @SuppressWarnings("WaitNotInLoop") // a pause of at most maxWait; the writer re-checks its limits after it, early is fine
    public void throttle(Duration maxWait, BooleanSupplier stillOver) {
        kick();
        throttled.incrementAndGet();
        lock.lock();
        try {
            if (!stillOver.getAsBoolean()) {
                return;
            }
            progress.await(maxWait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
            throttled.decrementAndGet();
        }
    }

    /** @return whether a writer waits in {@link #throttle} */
    public boolean hasThrottled() {
        return throttled.get() > 0;
    }

    /** Wakes the writers waiting in {@link #throttle} (they re-check their limit). */
    public void wakeThrottled() {
        signalProgress();
    }

    /** The flusher thread's loop (the kernel's {@code wb_workfn}); returns when stopped. */
    @Override
    public void run() {
        while (!stopping) {
            awaitWork();
            if (stopping) {
                return;
            }
            try {
                flushOnce();
            } catch (RuntimeException e) {
                // I/O errors are recorded on the inodes; anything else is a bug, logged and survived.
                System.getLogger(Flusher.class.getName()).log(System.Logger.Level.ERROR,
                        "background writeback failed", e);
            } catch (OutOfMemoryError e) {
                // The flusher ends; writers no longer wait for it but write back themselves.
                stopping = true;
                signalProgress();
                cache.outOfMemory(e);
                return;
            }
            signalProgress();
        }
    }

    @SuppressWarnings("WaitNotInLoop") // one timed wait; run() loops and re-checks, a spurious wakeup only starts a pass early
    private void awaitWork() {
        lock.lock();
        try {
            if (!kicked) {
                work.await(cache.options().writebackInterval().toNanos(), TimeUnit.NANOSECONDS);
            }
            kicked = false;
        } catch (InterruptedException e) {
            stopping = true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * One pass over the dirty inodes: over the background threshold (the kernel's
     * {@code wb_check_background_flush} while {@code wb_over_bg_thresh}), expired data
     * ({@code wb_check_old_data_flush}: at most once per {@code writebackInterval}, however often the
     * flusher is kicked, since every dirty inode is looked at), then reclaim.
     */
    void flushOnce() {
        long background = cache.options().dirtyBackgroundBytes();
        cache.forEachDirtyMapping(mapping -> {
            if (cache.dirtyBytes() <= background) {
                return false;
            }
            mapping.aops().writepages(0, Long.MAX_VALUE, false);
            signalProgress();
            return true;
        });
        long now = System.nanoTime();
        if (now - lastOldDataFlush >= cache.options().writebackInterval().toNanos()) {
            lastOldDataFlush = now;
            long expiredBefore = now - cache.options().dirtyExpire().toNanos();
            cache.forEachDirtyMapping(mapping -> {
                mapping.aops().writepagesDirtiedBefore(expiredBefore);
                return true;
            });
        }
        cache.reclaim().ifOverBudget(0);
    }

    private void signalProgress() {
        lock.lock();
        try {
            progress.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Stops the flusher thread and waits for it, at most 10 seconds. Idempotent. */
    public void stop() {
        stopping = true;
        Thread running;
        synchronized (this) {
            running = thread;
        }
        if (running != null) {
            running.interrupt();
            try {
                running.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
