package dev.iomap.cli.bench;

/**
 * What a thread (or a merged report) did in one direction: I/Os, bytes and completion latency.
 * Not thread-safe.
 */
public final class DirectionStats {
    private final LatencyStats clat = new LatencyStats();
    private long ios;
    private long bytes;

    void record(int length, long nanos) {
        ios++;
        bytes += length;
        clat.record(nanos);
    }

    /**
     * Adds another's I/Os into this.
     *
     * @param other unchanged
     */
    public void add(DirectionStats other) {
        ios += other.ios;
        bytes += other.bytes;
        clat.add(other.clat);
    }

    /** @return I/Os completed */
    public long ios() {
        return ios;
    }

    /** @return bytes transferred */
    public long bytes() {
        return bytes;
    }

    /** @return completion latencies (for a synchronous engine also the total latency) */
    public LatencyStats clat() {
        return clat;
    }
}
