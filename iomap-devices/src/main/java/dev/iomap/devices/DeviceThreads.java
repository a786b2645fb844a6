package dev.iomap.devices;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The write threads of a {@link FileBlockDevice}: a fixed-size pool that performs writes in the
 * background (reads, flushes, discards and writes issued under {@link dev.iomap.device.SyncSubmit#run}
 * run in their callers' threads). Daemon threads that end
 * after 30 idle seconds. Nothing interrupts them: {@link #shutdown()} lets queued work finish.
 * Thread-safe.
 */
final class DeviceThreads {
    private static final long IDLE_THREAD_TIMEOUT_SECONDS = 30;

    private final Set<Thread> writeThreads = ConcurrentHashMap.newKeySet();
    private final ExecutorService writer;

    /**
     * @param writePrefix name prefix of the write threads
     * @param writeThreads how many writes may be in flight at once, at least 1
     */
    DeviceThreads(String writePrefix, int writeThreads) {
        if (writeThreads < 1) {
            throw new IllegalArgumentException("write threads: " + writeThreads + " (at least 1)");
        }
        ThreadFactory named = Thread.ofPlatform().name(writePrefix, 1).daemon().factory();
        var pool = new ThreadPoolExecutor(writeThreads, writeThreads,
                IDLE_THREAD_TIMEOUT_SECONDS, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                task -> registeredWriteThread(named, task));
        pool.allowCoreThreadTimeOut(true);
        this.writer = pool;
    }

    /**
     * @param task a write, run in the background
     * @throws RejectedExecutionException after {@link #shutdown()}
     */
    void write(Runnable task) {
        writer.execute(task);
    }

    /**
     * @param thread a thread
     * @return whether it is one of the write threads (which must not wait for writes)
     */
    boolean isWriteThread(Thread thread) {
        return writeThreads.contains(thread);
    }

    /** Refuses new work and waits, through interrupts, until every queued write has run. */
    void shutdown() {
        writer.shutdown();
        boolean interrupted = false;
        while (true) {
            try {
                if (writer.awaitTermination(1, TimeUnit.MINUTES)) {
                    break;
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return a new write thread, in {@link #writeThreads} while it runs */
    private Thread registeredWriteThread(ThreadFactory named, Runnable task) {
        Thread thread = named.newThread(() -> {
            try {
                task.run();
            } finally {
                writeThreads.remove(Thread.currentThread());
            }
        });
        writeThreads.add(thread);
        return thread;
    }
}
