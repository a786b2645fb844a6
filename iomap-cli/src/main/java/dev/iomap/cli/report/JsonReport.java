package dev.iomap.cli.report;

import dev.iomap.api.IoStats;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.cli.bench.BenchSettings;
import dev.iomap.cli.bench.DirectionStats;
import dev.iomap.cli.bench.GroupResult;
import dev.iomap.cli.bench.LatencyStats;
import dev.iomap.cli.bench.RunResult;
import dev.iomap.cli.jobfile.BenchPlan;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * fio's {@code --output-format=json}: the same structure ({@code jobs[].write.bw_bytes},
 * {@code clat_ns.percentile}, {@code sync.lat_ns}, …; bandwidth samples, which fio takes every
 * 500 ms, are zero), plus per job an {@code "iomap"} object with the group's page-cache and device
 * counters, and a top-level {@code "iomap"} object saying where the jobs ran.
 */
public final class JsonReport {
    private static final DateTimeFormatter CTIME =
            DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneId.systemDefault());

    private JsonReport() {
    }

    /**
     * @param run the results
     * @param plan the jobs
     * @param version the program's version
     * @return the JSON document, ending with a newline
     */
    public static String of(RunResult run, BenchPlan plan, String version) {
        JsonWriter json = new JsonWriter();
        write(json, run, plan, version);
        return json.text() + "\n";
    }

    /**
     * Writes one run as an object (for the comparison's list of runs).
     *
     * @param json the writer, where a value may go
     * @param run the results
     * @param plan the jobs
     * @param version the program's version
     */
    static void write(JsonWriter json, RunResult run, BenchPlan plan, String version) {
        json.beginObject()
                .field("fio version", version)
                .field("timestamp", run.finished().getEpochSecond())
                .field("timestamp_ms", run.finished().toEpochMilli())
                .field("time", CTIME.format(run.finished()));
        strings(json, "global options", plan.globalOptions());
        settings(json, run);
        json.beginArray("jobs");
        for (GroupResult group : run.groups()) {
            for (ReportEntry entry : ReportEntry.of(group)) {
                job(json, entry);
            }
        }
        json.endArray().endObject();
    }

    private static void settings(JsonWriter json, RunResult run) {
        BenchSettings settings = run.settings();
        PageCacheOptions cache = settings.pageCache();
        json.beginObject("iomap")
                .field("adapter", settings.adapter())
                .field("device", run.device())
                .field("block_size", settings.blockSize())
                .field("background_writeback", settings.backgroundWriteback());
        strings(json, "fs_options", settings.adapterOptions());
        json.beginObject("page_cache");
        for (var component : PageCacheOptions.class.getRecordComponents()) {
            try {
                Object value = component.getAccessor().invoke(cache);
                switch (value) {
                    case Integer i -> json.field(component.getName(), i);
                    case Long l -> json.field(component.getName(), l);
                    case Boolean b -> json.field(component.getName(), b);
                    default -> json.field(component.getName(), String.valueOf(value));
                }
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot read PageCacheOptions." + component.getName(), e);
            }
        }
        json.endObject().endObject();
    }

    private static void job(JsonWriter json, ReportEntry entry) {
        json.beginObject()
                .field("jobname", entry.name())
                .field("groupid", entry.groupId())
                .field("error", entry.error().isPresent() ? 1 : 0)
                .field("eta", 0)
                .field("elapsed", Math.max(1, Math.round(entry.runtimeNanos() / 1e9)));
        strings(json, "job options", entry.job().options());
        direction(json, "read", entry, entry.read());
        direction(json, "write", entry, entry.write());
        direction(json, "trim", entry, new DirectionStats());
        json.beginObject("sync").field("total_ios", entry.sync().count());
        latency(json, "lat_ns", entry.sync(), entry.job().percentiles());
        json.endObject();
        double runtime = Math.max(1, entry.totalRuntimeNanos());
        json.field("job_runtime", entry.totalRuntimeNanos() / 1_000_000)
                .field("usr_cpu", 100 * entry.userCpuNanos() / runtime)
                .field("sys_cpu", 100 * entry.systemCpuNanos() / runtime)
                .field("ctx", 0)
                .field("majf", 0)
                .field("minf", 0);
        depths(json, entry.job().queueDepth());
        LatencyStats all = entry.allLatencies();
        shares(json, "latency_ns", FioFormat.distribution(all, FioFormat.TimeUnit.NSEC));
        shares(json, "latency_us", FioFormat.distribution(all, FioFormat.TimeUnit.USEC));
        shares(json, "latency_ms", FioFormat.distribution(all, FioFormat.TimeUnit.MSEC));
        json.field("latency_depth", entry.job().queueDepth())
                .field("latency_target", 0)
                .field("latency_percentile", 100.0)
                .field("latency_window", 0);
        iomap(json, entry.iomap());
        json.endObject();
    }

    private static void direction(JsonWriter json, String name, ReportEntry entry, DirectionStats stats) {
        boolean any = stats.ios() > 0;
        long bandwidth = any ? (long) entry.bandwidth(stats) : 0;
        json.beginObject(name)
                .field("io_bytes", stats.bytes())
                .field("io_kbytes", stats.bytes() >> 10)
                .field("bw_bytes", bandwidth)
                .field("bw", bandwidth >> 10)
                .field("iops", any ? entry.iops(stats) : 0.0)
                .field("runtime", any ? entry.runtimeMillis() : 0)
                .field("total_ios", stats.ios())
                .field("short_ios", 0)
                .field("drop_ios", 0);
        latency(json, "slat_ns", new LatencyStats(), List.of());
        latency(json, "clat_ns", stats.clat(), entry.job().percentiles());
        latency(json, "lat_ns", stats.clat(), List.of());
        for (String field : List.of("bw_min", "bw_max")) {
            json.field(field, 0);
        }
        json.field("bw_agg", 0.0).field("bw_mean", 0.0).field("bw_dev", 0.0).field("bw_samples", 0)
                .field("iops_min", 0).field("iops_max", 0).field("iops_mean", 0.0).field("iops_stddev", 0.0)
                .field("iops_samples", 0)
                .endObject();
    }

    private static void latency(JsonWriter json, String name, LatencyStats stats, List<Double> percentiles) {
        json.beginObject(name)
                .field("min", stats.min())
                .field("max", stats.max())
                .field("mean", stats.mean())
                .field("stddev", stats.stddev())
                .field("N", stats.count());
        if (stats.count() > 0 && !percentiles.isEmpty()) {
            json.beginObject("percentile");
            for (double percentile : percentiles) {
                json.field(String.format(Locale.ROOT, "%f", percentile), stats.percentile(percentile));
            }
            json.endObject();
        }
        json.endObject();
    }

    private static void depths(JsonWriter json, int queueDepth) {
        json.beginObject("iodepth_level");
        int bucket = TextReport.depthBucket(queueDepth);
        for (int i = 0; i < TextReport.DEPTH_LEVELS.size(); i++) {
            json.field(TextReport.DEPTH_LEVELS.get(i), i == bucket ? 100.0 : 0.0);
        }
        json.endObject();
        for (String name : List.of("iodepth_submit", "iodepth_complete")) {
            json.beginObject(name).field("0", 0.0).field("4", 100.0);
            for (String depth : List.of("8", "16", "32", "64", ">=64")) {
                json.field(depth, 0.0);
            }
            json.endObject();
        }
    }

    private static void iomap(JsonWriter json, IoStats stats) {
        var device = stats.device();
        json.beginObject("iomap")
                .field("scope", "group")
                .field("app_bytes_written", stats.appBytesWritten())
                .field("app_bytes_read", stats.appBytesRead())
                .field("device_bytes_written", device.bytesWritten())
                .field("device_data_bytes_written", device.dataBytesWritten())
                .field("device_metadata_bytes_written", device.metadataBytesWritten())
                .field("write_amplification", stats.writeAmplification())
                .field("device_bytes_read", device.bytesRead())
                .field("device_reads", device.reads())
                .field("device_writes", device.writes())
                .field("device_flushes", device.flushes())
                .field("device_discarded_bytes", device.discardedBytes())
                .field("map_blocks_calls", stats.mapBlocksCalls())
                .field("ioends", stats.ioends())
                .field("folio_states_allocated", stats.folioStatesAllocated());
        json.beginObject("folios_by_order");
        long[] byOrder = stats.foliosByOrder();
        for (int order = 0; order < byOrder.length; order++) {
            json.field(Integer.toString(order), byOrder[order]);
        }
        json.endObject();
        Map<String, Long> counters = TextReport.nonzero(stats.adapterCounters());
        if (!counters.isEmpty()) {
            json.beginObject("adapter_counters");
            counters.forEach(json::field);
            json.endObject();
        }
        json.endObject();
    }

    private static void shares(JsonWriter json, String name, Map<String, Double> shares) {
        json.beginObject(name);
        shares.forEach(json::field);
        json.endObject();
    }

    private static void strings(JsonWriter json, String name, Map<String, String> values) {
        json.beginObject(name);
        values.forEach(json::field);
        json.endObject();
    }
}
