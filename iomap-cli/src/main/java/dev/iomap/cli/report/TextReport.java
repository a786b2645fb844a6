package dev.iomap.cli.report;

import dev.iomap.api.IoStats;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.cli.FsOptions;
import dev.iomap.cli.bench.BenchSettings;
import dev.iomap.cli.bench.DirectionStats;
import dev.iomap.cli.bench.GroupResult;
import dev.iomap.cli.bench.RunResult;
import dev.iomap.cli.jobfile.BenchPlan;
import dev.iomap.cli.jobfile.JobSpec;
import java.io.PrintWriter;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * fio's normal output: job lines before the run, then per report block IOPS, bandwidth, latency
 * statistics and percentiles, sync latencies, the run status of each group, and (where fio prints
 * disk statistics) the page-cache and device counters of each group with the write amplification.
 */
public final class TextReport {
    private static final DateTimeFormatter CTIME =
            DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneId.systemDefault());

    private final PrintWriter out;

    /** @param out where the report goes */
    public TextReport(PrintWriter out) {
        this.out = out;
    }

    /**
     * The lines fio prints before it starts: one per job, the version, the thread count.
     *
     * @param plan the jobs
     * @param settings where they run
     * @param version the program's version line
     */
    public void preamble(BenchPlan plan, BenchSettings settings, String version) {
        for (JobSpec job : plan.jobs()) {
            out.println(job.name() + ": (g=" + job.groupId() + "): rw=" + job.io().rw().fioName() + ", bs=(R) "
                    + blockRange(job.io().readBlockSize()) + ", (W) " + blockRange(job.io().writeBlockSize())
                    + ", (T) " + blockRange(job.io().writeBlockSize()) + ", ioengine="
                    + (job.queueDepth() > 1 ? job.ioengine() : JobSpec.ENGINE) + ", iodepth=" + job.queueDepth());
            if (job.numjobs() > 1) {
                out.println("...");
            }
        }
        PageCacheOptions cache = settings.pageCache();
        out.println(version + ": adapter " + settings.adapter() + ", block size " + settings.blockSize()
                + ", page size " + cache.pageSize() + ", folios up to "
                + FioFormat.exactBytes(cache.maxFolioSize()) + ", order hints "
                + onOff(cache.orderHints()) + ", per-block dirty " + onOff(cache.perBlockDirty())
                + ", state lock " + cache.stateLock()
                + (settings.adapterOptions().isEmpty() ? "" : ", fs options " + FsOptions.format(settings.adapterOptions())));
        int threads = plan.threads();
        out.println("Starting " + threads + " thread" + (threads == 1 ? "" : "s"));
        out.flush();
    }

    /**
     * @param run the results
     */
    public void results(RunResult run) {
        out.println();
        List<List<ReportEntry>> groups = new ArrayList<>();
        for (GroupResult group : run.groups()) {
            groups.add(ReportEntry.of(group));
        }
        for (List<ReportEntry> entries : groups) {
            entries.forEach(this::entry);
        }
        for (int i = 0; i < groups.size(); i++) {
            runStatus(run.groups().get(i).groupId(), groups.get(i));
        }
        for (GroupResult group : run.groups()) {
            iomap(run, group);
        }
        out.flush();
    }

    @SuppressWarnings("OrphanedFormatString") // "100.00%" is fio's literal output, not a format
    private void entry(ReportEntry entry) {
        out.println(entry.name() + ": (groupid=" + entry.groupId() + ", jobs=" + entry.jobs() + "): err="
                + String.format(Locale.ROOT, "%2d", entry.error().isPresent() ? 1 : 0) + ": pid="
                + ProcessHandle.current().pid() + ": " + CTIME.format(entry.finished()));
        if (!entry.job().description().isEmpty()) {
            out.println("  Description  : [" + entry.job().description() + "]");
        }
        entry.error().ifPresent(error -> out.println("  error        : " + error));
        direction("read", entry, entry.read(), "");
        direction("write", entry, entry.write(), "; 0 zone resets");
        FioFormat.distributionLines(entry.allLatencies()).forEach(out::println);
        if (entry.sync().count() > 0) {
            out.println("  fsync/fdatasync/sync_file_range:");
            out.println(FioFormat.latencyLine("sync", entry.sync()));
            FioFormat.percentileLines("sync", entry.sync(), entry.job().percentiles()).forEach(out::println);
        }
        double runtime = Math.max(1, entry.totalRuntimeNanos());
        out.println(String.format(Locale.ROOT, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=0, majf=0, minf=0",
                100 * entry.userCpuNanos() / runtime, 100 * entry.systemCpuNanos() / runtime));
        int bucket = depthBucket(entry.job().queueDepth());
        List<String> levels = new ArrayList<>();
        for (String level : List.of("1", "2", "4", "8", "16", "32", ">=64")) {
            levels.add(level + "=" + (DEPTH_LEVELS.get(bucket).equals(level) ? "100.0%" : "0.0%"));
        }
        out.println("  IO depths    : " + String.join(", ", levels));
        out.println("     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%");
        out.println("     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%");
        out.println("     issued rwts: total=" + entry.read().ios() + "," + entry.write().ios()
                + ",0,0 short=0,0,0,0 dropped=0,0,0,0");
        out.println("     latency   : target=0, window=0, percentile=100.00%, depth=" + entry.job().queueDepth());
    }

    private void direction(String name, ReportEntry entry, DirectionStats stats, String suffix) {
        if (stats.ios() == 0) {
            return;
        }
        long bandwidth = (long) entry.bandwidth(stats);
        out.println("  " + name + ": IOPS=" + FioFormat.num2str(Math.round(entry.iops(stats)), 4, false, "")
                + ", BW=" + FioFormat.num2str(bandwidth, 4, true, "B/s") + " ("
                + FioFormat.num2str(bandwidth, 4, false, "B/s") + ")(" + FioFormat.num2str(stats.bytes(), 4, true, "B")
                + "/" + entry.runtimeMillis() + "msec)" + suffix);
        out.println(FioFormat.latencyLine("clat", stats.clat()));
        out.println(FioFormat.latencyLine(" lat", stats.clat()));
        FioFormat.percentileLines("clat", stats.clat(), entry.job().percentiles()).forEach(out::println);
    }

    private void runStatus(int groupId, List<ReportEntry> entries) {
        out.println();
        out.println("Run status group " + groupId + " (all jobs):");
        statusLine("   READ", GroupStatus.of(entries, ReportEntry::read));
        statusLine("  WRITE", GroupStatus.of(entries, ReportEntry::write));
    }

    private void statusLine(String label, GroupStatus status) {
        if (status == null) {
            return;
        }
        Function<Long, String> binary = value -> FioFormat.num2str(value, 4, true, "B/s");
        Function<Long, String> decimal = value -> FioFormat.num2str(value, 4, false, "B/s");
        out.println(label + ": bw=" + binary.apply(status.aggregate()) + " (" + decimal.apply(status.aggregate())
                + "), " + binary.apply(status.minBandwidth()) + "-" + binary.apply(status.maxBandwidth()) + " ("
                + decimal.apply(status.minBandwidth()) + "-" + decimal.apply(status.maxBandwidth()) + "), io="
                + FioFormat.num2str(status.bytes(), 4, true, "B") + " ("
                + FioFormat.num2str(status.bytes(), 4, false, "B") + "), run=" + status.minRunMillis() + "-"
                + status.maxRunMillis() + "msec");
    }

    private void iomap(RunResult run, GroupResult group) {
        IoStats stats = group.iomap();
        BenchSettings settings = run.settings();
        out.println();
        out.println("iomap stats (group " + group.groupId() + "): adapter=" + settings.adapter() + ", device="
                + run.device() + ", block size=" + settings.blockSize() + ", page size="
                + settings.pageCache().pageSize());
        out.println("  app      : written=" + bytes(stats.appBytesWritten()) + ", read=" + bytes(stats.appBytesRead()));
        var device = stats.device();
        out.println("  device   : written=" + bytes(device.bytesWritten()) + " (data=" + bytes(device.dataBytesWritten())
                + ", metadata=" + bytes(device.metadataBytesWritten()) + "), read=" + bytes(device.bytesRead())
                + ", writes=" + device.writes() + ", reads=" + device.reads() + ", flushes=" + device.flushes());
        out.println(String.format(Locale.ROOT, "  write amplification=%.3f", stats.writeAmplification()));
        out.println("  writeback: map_blocks=" + stats.mapBlocksCalls() + ", ioends=" + stats.ioends()
                + ", folio states allocated=" + stats.folioStatesAllocated());
        out.println("  folios   : " + foliosByOrder(stats.foliosByOrder()));
        Map<String, Long> counters = nonzero(stats.adapterCounters());
        if (!counters.isEmpty()) {
            List<String> pairs = new ArrayList<>();
            counters.forEach((name, value) -> pairs.add(name + "=" + value));
            out.println("  adapter  : " + String.join(", ", pairs));
        }
    }

    /**
     * @param counters adapter counters
     * @return those that are not zero, in the same (sorted) order
     */
    static Map<String, Long> nonzero(Map<String, Long> counters) {
        Map<String, Long> nonzero = new TreeMap<>();
        counters.forEach((name, value) -> {
            if (value != 0) {
                nonzero.put(name, value);
            }
        });
        return nonzero;
    }

    /**
     * @param byOrder folios created per order
     * @return {@code "order 0=12, order 4=3"}, or {@code "none created"}
     */
    static String foliosByOrder(long[] byOrder) {
        List<String> parts = new ArrayList<>();
        for (int order = 0; order < byOrder.length; order++) {
            if (byOrder[order] != 0) {
                parts.add("order " + order + "=" + byOrder[order]);
            }
        }
        return parts.isEmpty() ? "none created" : String.join(", ", parts);
    }

    private static String bytes(long value) {
        return FioFormat.num2str(value, 4, true, "B");
    }

    private static String blockRange(int size) {
        String text = FioFormat.num2str(size, 4, true, "B");
        return text + "-" + text;
    }

    private static String onOff(boolean value) {
        return value ? "on" : "off";
    }

    /** fio's iodepth levels, each counting the depths from it up to the next. */
    static final List<String> DEPTH_LEVELS = List.of("1", "2", "4", "8", "16", "32", ">=64");

    /**
     * @param depth a queue depth, at least 1
     * @return the index in {@link #DEPTH_LEVELS} of the level fio counts a constant {@code depth} in
     */
    static int depthBucket(int depth) {
        int bucket = 0;
        for (int level = 2; level <= depth && bucket < DEPTH_LEVELS.size() - 1; level *= 2) {
            bucket++;
        }
        return bucket;
    }
}
