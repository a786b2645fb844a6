package dev.iomap.cli.bench;

import org.HdrHistogram.Histogram;

/**
 * Latencies in nanoseconds: an HdrHistogram (three significant digits) for percentiles and
 * distribution, and exact count, min, max, mean and standard deviation (Welford).
 *
 * <p>Not thread-safe: a thread records into its own, and {@link #add} merges them afterwards.
 */
public final class LatencyStats {
    private final Histogram histogram = new Histogram(3);
    private long count;
    private long min = Long.MAX_VALUE;
    private long max;
    private double mean;
    private double squaredDeviations;

    /** @param nanos one latency, at least 0 */
    void record(long nanos) {
        long value = Math.max(0, nanos);
        histogram.recordValue(value);
        count++;
        min = Math.min(min, value);
        max = Math.max(max, value);
        double delta = value - mean;
        mean += delta / count;
        squaredDeviations += delta * (value - mean);
    }

    /**
     * Merges another's samples into this (Chan's parallel formula for the moments).
     *
     * @param other the samples to add; unchanged
     */
    public void add(LatencyStats other) {
        if (other.count == 0) {
            return;
        }
        histogram.add(other.histogram);
        long total = count + other.count;
        double delta = other.mean - mean;
        squaredDeviations += other.squaredDeviations + delta * delta * count * other.count / total;
        mean += delta * other.count / total;
        count = total;
        min = Math.min(min, other.min);
        max = Math.max(max, other.max);
    }

    /** @return samples */
    public long count() {
        return count;
    }

    /** @return the least sample, 0 if none */
    public long min() {
        return count == 0 ? 0 : min;
    }

    /** @return the largest sample, 0 if none */
    public long max() {
        return max;
    }

    /** @return the mean, 0 if none */
    public double mean() {
        return mean;
    }

    /** @return the sample standard deviation (n - 1, as fio), 0 for fewer than two samples */
    public double stddev() {
        return count < 2 ? 0 : Math.sqrt(squaredDeviations / (count - 1));
    }

    /**
     * @param percentile from 0 to 100
     * @return the latency below which that share of samples fell (histogram precision), 0 if none
     */
    public long percentile(double percentile) {
        return count == 0 ? 0 : histogram.getValueAtPercentile(percentile);
    }

    /**
     * @param from the least latency counted, inclusive
     * @param to the bound, exclusive
     * @return samples in {@code [from, to)} (histogram precision)
     */
    public long countBetween(long from, long to) {
        if (count == 0 || to <= from) {
            return 0;
        }
        return histogram.getCountBetweenValues(from, to - 1);
    }

    /** @return a copy */
    public LatencyStats copy() {
        LatencyStats copy = new LatencyStats();
        copy.add(this);
        return copy;
    }
}
