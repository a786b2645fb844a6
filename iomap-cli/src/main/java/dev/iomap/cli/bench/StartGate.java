package dev.iomap.cli.bench;

import java.util.concurrent.CountDownLatch;

/**
 * Starts a group's threads together: each says it is ready (files open), then waits for the start
 * time that {@link #open} publishes. Thread-safe.
 */
final class StartGate {
    private final CountDownLatch ready;
    private final CountDownLatch start = new CountDownLatch(1);
    private volatile long startNanos;

    /** @param threads how many threads will call {@link #ready()} */
    StartGate(int threads) {
        ready = new CountDownLatch(threads);
    }

    /** Called once by each thread, also when it failed to get ready. */
    void ready() {
        ready.countDown();
    }

    /** @throws InterruptedException if interrupted while waiting for every thread */
    void awaitReady() throws InterruptedException {
        ready.await();
    }

    /** @param nanos the {@link System#nanoTime()} the run starts at */
    void open(long nanos) {
        startNanos = nanos;
        start.countDown();
    }

    /**
     * @return the start time
     * @throws InterruptedException if interrupted while waiting
     */
    long awaitStart() throws InterruptedException {
        start.await();
        return startNanos;
    }
}
