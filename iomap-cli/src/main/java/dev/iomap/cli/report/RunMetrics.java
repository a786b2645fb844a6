package dev.iomap.cli.report;

import dev.iomap.api.IoStats;
import dev.iomap.cli.bench.GroupResult;
import dev.iomap.cli.bench.LatencyStats;
import dev.iomap.cli.bench.RunResult;
import dev.iomap.cli.bench.ThreadResult;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * The numbers a comparison puts side by side, for one whole run: bytes over the groups' measured
 * time (each group's longest thread), latencies of every thread together, counters added up.
 *
 * @param readBytes bytes read
 * @param writeBytes bytes written
 * @param readIos reads
 * @param writeIos writes
 * @param seconds measured time
 * @param read read latencies
 * @param write write latencies
 * @param sync sync latencies
 * @param appBytesWritten bytes the jobs wrote through the cache
 * @param deviceBytesWritten bytes the device took
 * @param deviceBytesRead bytes read from the device
 * @param mapBlocksCalls writeback's mapBlocks calls
 * @param ioends ioends submitted
 * @param folioStatesAllocated per-block states created
 * @param foliosByOrder folios created per order
 * @param dataBytesWritten device bytes written as data
 * @param metadataBytesWritten device bytes written as metadata (journal, inodes, allocation maps...)
 * @param adapterCounters the adapter's counters, added up over the groups, by name
 */
record RunMetrics(
        long readBytes,
        long writeBytes,
        long readIos,
        long writeIos,
        double seconds,
        LatencyStats read,
        LatencyStats write,
        LatencyStats sync,
        long appBytesWritten,
        long deviceBytesWritten,
        long deviceBytesRead,
        long mapBlocksCalls,
        long ioends,
        long folioStatesAllocated,
        long[] foliosByOrder,
        long dataBytesWritten,
        long metadataBytesWritten,
        Map<String, Long> adapterCounters) {

    static RunMetrics of(RunResult run) {
        long readBytes = 0;
        long writeBytes = 0;
        long readIos = 0;
        long writeIos = 0;
        double seconds = 0;
        LatencyStats read = new LatencyStats();
        LatencyStats write = new LatencyStats();
        LatencyStats sync = new LatencyStats();
        long app = 0;
        long written = 0;
        long deviceRead = 0;
        long mapBlocks = 0;
        long ioends = 0;
        long states = 0;
        long[] orders = new long[0];
        long data = 0;
        long metadata = 0;
        Map<String, Long> counters = new TreeMap<>();
        for (GroupResult group : run.groups()) {
            long longest = 0;
            for (ThreadResult thread : group.threads()) {
                readBytes += thread.read().bytes();
                writeBytes += thread.write().bytes();
                readIos += thread.read().ios();
                writeIos += thread.write().ios();
                read.add(thread.read().clat());
                write.add(thread.write().clat());
                sync.add(thread.sync());
                longest = Math.max(longest, thread.runtimeNanos());
            }
            seconds += longest / 1e9;
            IoStats stats = group.iomap();
            app += stats.appBytesWritten();
            written += stats.device().bytesWritten();
            deviceRead += stats.device().bytesRead();
            mapBlocks += stats.mapBlocksCalls();
            ioends += stats.ioends();
            states += stats.folioStatesAllocated();
            orders = add(orders, stats.foliosByOrder());
            data += stats.device().dataBytesWritten();
            metadata += stats.device().metadataBytesWritten();
            stats.adapterCounters().forEach((name, value) -> counters.merge(name, value, Long::sum));
        }
        return new RunMetrics(readBytes, writeBytes, readIos, writeIos, seconds, read, write, sync, app, written,
                deviceRead, mapBlocks, ioends, states, orders, data, metadata, counters);
    }

    private static long[] add(long[] sum, long[] more) {
        long[] result = Arrays.copyOf(sum, Math.max(sum.length, more.length));
        for (int i = 0; i < more.length; i++) {
            result[i] += more[i];
        }
        return result;
    }

    /** @return device bytes written per byte written by the jobs, 0 if they wrote nothing */
    double writeAmplification() {
        return appBytesWritten == 0 ? 0 : (double) deviceBytesWritten / appBytesWritten;
    }

    /**
     * @param order a folio order
     * @return folios of that order created
     */
    long folios(int order) {
        return order < foliosByOrder.length ? foliosByOrder[order] : 0;
    }
}
