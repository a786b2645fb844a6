package dev.iomap.core.mm;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Where the background part of readahead runs: a few daemon threads of one {@code IomapCache}
 * (named {@code iomap-readahead-N}, ended after 30 idle seconds), the counterpart of the kernel's
 * asynchronous bio completion for readahead ({@code mpage_readahead}'s bio, ended by
 * {@code iomap_read_end_io}). Counts the tasks not yet finished so tests can wait for quiet.
 * Thread-safe.
 */
public final class ReadaheadPool {
    /** Device reads of readahead in flight per cache: enough to keep a disk busy while one completes. */
    static final int THREADS = 2;

    /** One piece of background readahead. */
    public interface Task extends Runnable {
        /** Drops the task undone (the pool is shut down): its folios stay to be read on demand. */
        void abandon();
    }

    private final ThreadPoolExecutor threads;
    private final Object quiet = new Object();
    private volatile Executor executor;
    private volatile boolean closed;
    private int pending;

    /** @param uncaught what its threads do with an error nothing caught */
    public ReadaheadPool(Thread.UncaughtExceptionHandler uncaught) {
        threads = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                Thread.ofPlatform().name("iomap-readahead-", 1).daemon().uncaughtExceptionHandler(uncaught).factory());
        threads.allowCoreThreadTimeOut(true);
        executor = threads;
    }

    /**
     * Runs {@code task} in the background, or abandons it if the pool is shut down.
     *
     * @param task the work
     */
    public void submit(Task task) {
        synchronized (quiet) {
            pending++;
        }
        try {
            executor.execute(() -> {
                try {
                    if (closed) {
                        task.abandon();
                    } else {
                        task.run();
                    }
                } finally {
                    done();
                }
            });
        } catch (RejectedExecutionException e) {
            try {
                task.abandon();
            } finally {
                done();
            }
        }
    }

    private void done() {
        synchronized (quiet) {
            pending--;
            if (pending == 0) {
                quiet.notifyAll();
            }
        }
    }

    /**
     * Waits until every submitted task has finished or been abandoned.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitQuiet() throws InterruptedException {
        synchronized (quiet) {
            while (pending > 0) {
                quiet.wait();
            }
        }
    }

    /**
     * As {@link #awaitQuiet()}, but gives up after {@code timeout}: a device read that hangs (a network
     * device that went away) must not hang the caller too.
     *
     * @param timeout longest wait
     * @return whether the pool became quiet in time
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitQuiet(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (quiet) {
            while (pending > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(quiet, left);
            }
            return true;
        }
    }

    /**
     * Test seam: runs the tasks on {@code replacement} instead of the pool's threads (a test runs
     * them one by one, at the points it wants).
     *
     * @param replacement where tasks go from now on
     */
    public void executor(Executor replacement) {
        executor = replacement;
    }

    /**
     * Refuses new tasks, abandons the queued ones and waits (at most 10 seconds) for the running ones,
     * whose device reads cannot be cut short.
     */
    public void shutdown() {
        closed = true;
        threads.shutdown();
        try {
            threads.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
