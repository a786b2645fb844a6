package dev.iomap.cli.report;

import dev.iomap.cli.bench.DirectionStats;
import java.util.List;
import java.util.function.Function;

/**
 * fio's "Run status group" numbers for one direction: aggregate bandwidth (all bytes over the
 * longest runtime), the least and most bandwidth of one report block, and the runtimes' range.
 *
 * @param bytes bytes of every block
 * @param aggregate bytes per second
 * @param minBandwidth least bytes per second of a block
 * @param maxBandwidth most bytes per second of a block
 * @param minRunMillis shortest runtime
 * @param maxRunMillis longest runtime
 */
record GroupStatus(long bytes, long aggregate, long minBandwidth, long maxBandwidth, long minRunMillis,
        long maxRunMillis) {

    /**
     * @param entries a group's report blocks
     * @param direction which direction of a block
     * @return the status, or null if no block did I/O in that direction
     */
    static GroupStatus of(List<ReportEntry> entries, Function<ReportEntry, DirectionStats> direction) {
        long bytes = 0;
        long maxRun = 0;
        long minRun = Long.MAX_VALUE;
        long minBw = Long.MAX_VALUE;
        long maxBw = 0;
        boolean any = false;
        for (ReportEntry entry : entries) {
            DirectionStats stats = direction.apply(entry);
            if (stats.ios() == 0) {
                continue;
            }
            any = true;
            bytes += stats.bytes();
            maxRun = Math.max(maxRun, entry.runtimeNanos());
            minRun = Math.min(minRun, entry.runtimeNanos());
            long bandwidth = (long) entry.bandwidth(stats);
            minBw = Math.min(minBw, bandwidth);
            maxBw = Math.max(maxBw, bandwidth);
        }
        if (!any) {
            return null;
        }
        long aggregate = maxRun == 0 ? 0 : (long) (bytes * 1e9 / maxRun);
        return new GroupStatus(bytes, aggregate, minBw, maxBw, minRun / 1_000_000, maxRun / 1_000_000);
    }
}
