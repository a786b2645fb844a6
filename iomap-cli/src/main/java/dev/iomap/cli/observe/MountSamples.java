package dev.iomap.cli.observe;

import dev.iomap.api.CacheStatus;
import dev.iomap.api.IoStats;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.device.DeviceStats;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A mount's counters and gauges as {@link MountSample}s: the one list that the Prometheus endpoint, the
 * JMX bean and {@code iomap top} all show. Names are documented in the README ("Metrics").
 */
public final class MountSamples {
    private MountSamples() {
    }

    /**
     * @param fs the mounted file system
     * @return its samples now, in a stable order
     */
    public static List<MountSample> of(IomapFileSystem fs) {
        IoStats stats = fs.stats();
        CacheStatus cache = fs.cacheStatus();
        DeviceStats device = stats.device();
        List<MountSample> samples = new ArrayList<>();
        counter(samples, "iomap_app_written_bytes_total", stats.appBytesWritten(), "bytes applications wrote");
        counter(samples, "iomap_app_read_bytes_total", stats.appBytesRead(), "bytes applications read");
        samples.add(new MountSample("iomap_device_written_bytes_total", Map.of("purpose", "data"),
                (double) device.dataBytesWritten(), true, "bytes written to the device, by purpose (data, metadata)"));
        samples.add(new MountSample("iomap_device_written_bytes_total", Map.of("purpose", "metadata"),
                (double) device.metadataBytesWritten(), true, "bytes written to the device, by purpose (data, metadata)"));
        counter(samples, "iomap_device_read_bytes_total", device.bytesRead(), "bytes read from the device");
        counter(samples, "iomap_device_writes_total", device.writes(), "write requests sent to the device");
        counter(samples, "iomap_device_reads_total", device.reads(), "read requests sent to the device");
        counter(samples, "iomap_device_flushes_total", device.flushes(), "cache flushes sent to the device");
        counter(samples, "iomap_device_discarded_bytes_total", device.discardedBytes(), "bytes discarded on the device");
        counter(samples, "iomap_map_blocks_calls_total", stats.mapBlocksCalls(),
                "calls of the adapter's writebackRange (the kernel's ->writeback_range)");
        counter(samples, "iomap_ioends_total", stats.ioends(), "ioends submitted to the device");
        counter(samples, "iomap_folio_states_allocated_total", stats.folioStatesAllocated(),
                "per-block folio states (iomap_folio_state) made");
        long[] orders = stats.foliosByOrder();
        for (int order = 0; order < orders.length; order++) {
            if (orders[order] > 0) {
                samples.add(new MountSample("iomap_folios_created_total", Map.of("order", Integer.toString(order)),
                        (double) orders[order], true, "folios made, by order (log2 of their pages)"));
            }
        }
        counter(samples, "iomap_cache_read_hits_total", cache.readHits(), "folios a read found cached and uptodate");
        counter(samples, "iomap_cache_read_misses_total", cache.readMisses(), "folios a read had to read from the device");
        gauge(samples, "iomap_cache_bytes", cache.cachedBytes(), "bytes of folios in the page cache");
        gauge(samples, "iomap_cache_dirty_bytes", cache.dirtyBytes(), "bytes in dirty folios (Dirty in /proc/meminfo)");
        gauge(samples, "iomap_cache_writeback_bytes", cache.writebackBytes(),
                "bytes in folios under writeback (Writeback in /proc/meminfo)");
        gauge(samples, "iomap_cache_budget_bytes", cache.budgetBytes(), "the page cache's memory budget");
        samples.add(new MountSample("iomap_write_amplification_ratio", Map.of(), stats.writeAmplification(), false,
                "device bytes written per byte applications wrote, since mount"));
        stats.adapterCounters().forEach((name, value) -> samples.add(new MountSample("iomap_adapter_events_total",
                Map.of("counter", metricLabel(name)), (double) value, true,
                "the adapter's own counters (glock grants, journal commits, ...), by name")));
        return samples;
    }

    /**
     * @return an adapter counter's name as a label value: words split at capitals and dots, joined by
     *     underscores, e.g. {@code glock.cachedHolds} is {@code glock_cached_holds}
     */
    static String metricLabel(String counter) {
        return counter.replaceAll("([a-z0-9])([A-Z])", "$1_$2").replace('.', '_').toLowerCase(Locale.ROOT);
    }

    private static void counter(List<MountSample> samples, String name, long value, String help) {
        samples.add(new MountSample(name, Map.of(), (double) value, true, help));
    }

    private static void gauge(List<MountSample> samples, String name, long value, String help) {
        samples.add(new MountSample(name, Map.of(), (double) value, false, help));
    }
}
