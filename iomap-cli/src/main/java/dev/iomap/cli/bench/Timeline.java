package dev.iomap.cli.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Samples a running group's byte counts every interval on a thread of its own, for the report's
 * bandwidth-over-time chart. Closing takes one last sample and stops.
 */
final class Timeline implements AutoCloseable {
    private final List<Worker> workers;
    private final long start;
    private final List<BandwidthSample> samples = new ArrayList<>();
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("bench-timeline").factory());

    private Timeline(List<Worker> workers, long start, Duration every) {
        this.workers = workers;
        this.start = start;
        sample();
        sampler.scheduleAtFixedRate(this::sample, every.toNanos(), every.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * @param workers the group's threads
     * @param start when the group started ({@link System#nanoTime()})
     * @param every how often to sample
     * @return the running sampler
     */
    static Timeline start(List<Worker> workers, long start, Duration every) {
        return new Timeline(workers, start, every);
    }

    private synchronized void sample() {
        long read = 0;
        long written = 0;
        for (Worker worker : workers) {
            read += worker.bytesRead();
            written += worker.bytesWritten();
        }
        samples.add(new BandwidthSample(System.nanoTime() - start, read, written));
    }

    /** @return the samples so far, oldest first */
    synchronized List<BandwidthSample> samples() {
        return List.copyOf(samples);
    }

    @Override
    public void close() {
        sampler.shutdownNow();
        try {
            sampler.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sample();
    }
}
