package dev.iomap.cli.report.html;

import dev.iomap.api.IoStats;
import dev.iomap.cli.bench.BandwidthSample;
import dev.iomap.cli.bench.DirectionStats;
import dev.iomap.cli.bench.GroupResult;
import dev.iomap.cli.bench.LatencyStats;
import dev.iomap.cli.bench.RunResult;
import dev.iomap.cli.bench.ThreadResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code iomap bench --report FILE}: one self-contained HTML page of a run. For each reporting group,
 * bandwidth over time (from the group's timeline), completion-latency percentiles and a histogram of the
 * latencies (log2 buckets); for the run, write amplification per group and the folios made by order. The
 * charts are inline SVG ({@link SvgChart}); the page fetches nothing.
 */
public final class BenchHtmlReport {
    private static final double[] PERCENTILES = {50, 90, 95, 99, 99.9, 99.99};
    private static final double MIB = 1 << 20;

    private BenchHtmlReport() {
    }

    /**
     * @param run the run
     * @param version the program's version line
     * @return the page
     */
    public static String of(RunResult run, String version) {
        HtmlPage page = new HtmlPage("iomap bench report");
        page.paragraph(version + " — adapter " + run.settings().adapter() + ", " + run.device() + ", block size "
                + run.settings().blockSize() + ", page size " + run.settings().pageCache().pageSize()
                + ", finished " + run.finished());
        page.table(List.of("group", "jobs", "read MiB/s", "write MiB/s", "IOPS", "p50 µs", "p99 µs", "WA"), summary(run));
        for (GroupResult group : run.groups()) {
            String name = groupName(group);
            page.heading("Group " + group.groupId() + ": " + name);
            page.chart(bandwidth(group, name));
            page.chart(percentiles(group, name));
            page.chart(histogram(group, name));
        }
        page.heading("The whole run");
        page.chart(writeAmplification(run));
        page.chart(folioOrders(run));
        return page.html();
    }

    private static List<List<String>> summary(RunResult run) {
        List<List<String>> rows = new ArrayList<>();
        for (GroupResult group : run.groups()) {
            Merged m = Merged.of(group);
            LatencyStats main = m.write.ios() >= m.read.ios() ? m.write.clat() : m.read.clat();
            rows.add(List.of(Integer.toString(group.groupId()), groupName(group),
                    f1(m.read.bytes() / MIB / m.seconds), f1(m.write.bytes() / MIB / m.seconds),
                    String.format(Locale.ROOT, "%.0f", (m.read.ios() + m.write.ios()) / m.seconds),
                    f1(main.percentile(50) / 1e3), f1(main.percentile(99) / 1e3), wa(group.iomap())));
        }
        return rows;
    }

    static String bandwidth(GroupResult group, String name) {
        // the last sample is taken when the threads end: a stub of an interval whose rate says little
        List<BandwidthSample> samples = new ArrayList<>(group.timeline());
        if (samples.size() > 2 && samples.getLast().nanos() - samples.get(samples.size() - 2).nanos() < 100_000_000) {
            samples.remove(samples.size() - 2);
        }
        int n = Math.max(0, samples.size() - 1);
        double[] x = new double[n];
        double[] read = new double[n];
        double[] write = new double[n];
        for (int i = 0; i < n; i++) {
            BandwidthSample a = samples.get(i);
            BandwidthSample b = samples.get(i + 1);
            double seconds = Math.max(1e-9, (b.nanos() - a.nanos()) / 1e9);
            x[i] = b.nanos() / 1e9;
            read[i] = (b.readBytes() - a.readBytes()) / MIB / seconds;
            write[i] = (b.writtenBytes() - a.writtenBytes()) / MIB / seconds;
        }
        List<SvgChart.Line> lines = new ArrayList<>();
        if (n > 0 && samples.getLast().readBytes() > 0) {
            lines.add(new SvgChart.Line("read", x, read));
        }
        if (n > 0 && (samples.getLast().writtenBytes() > 0 || lines.isEmpty())) {
            lines.add(new SvgChart.Line("write", x, write));
        }
        return SvgChart.line("bandwidth", "Bandwidth over time: " + name, "seconds since the group started",
                "MiB/s", lines);
    }

    static String percentiles(GroupResult group, String name) {
        Merged m = Merged.of(group);
        List<String> categories = new ArrayList<>();
        for (double p : PERCENTILES) {
            categories.add("p" + (p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p)));
        }
        List<SvgChart.Bars> series = new ArrayList<>();
        for (Direction d : m.directions()) {
            double[] values = new double[PERCENTILES.length];
            for (int i = 0; i < PERCENTILES.length; i++) {
                values[i] = d.latency.percentile(PERCENTILES[i]) / 1e3;
            }
            series.add(new SvgChart.Bars(d.name, values));
        }
        return SvgChart.bars("latency-percentiles", "Completion latency percentiles: " + name, "µs", categories,
                series, BenchHtmlReport::f1);
    }

    static String histogram(GroupResult group, String name) {
        Merged m = Merged.of(group);
        long max = 1;
        for (Direction d : m.directions()) {
            max = Math.max(max, d.latency.max());
        }
        List<String> categories = new ArrayList<>();
        List<long[]> bounds = new ArrayList<>();
        long from = 0;
        for (long to = 1000; from <= max; to *= 2) {
            categories.add(to <= 1000 ? "<1µs" : "<" + micros(to));
            bounds.add(new long[] {from, to});
            from = to;
        }
        List<SvgChart.Bars> series = new ArrayList<>();
        for (Direction d : m.directions()) {
            double[] counts = new double[bounds.size()];
            for (int i = 0; i < counts.length; i++) {
                counts[i] = d.latency.countBetween(bounds.get(i)[0], bounds.get(i)[1]);
            }
            series.add(new SvgChart.Bars(d.name, counts));
        }
        return SvgChart.bars("latency-histogram", "Completion latency histogram: " + name, "I/Os", categories,
                series, value -> String.format(Locale.ROOT, "%.0f", value));
    }

    static String writeAmplification(RunResult run) {
        List<String> names = new ArrayList<>();
        double[] values = new double[run.groups().size()];
        for (int i = 0; i < values.length; i++) {
            GroupResult group = run.groups().get(i);
            names.add(groupName(group));
            values[i] = group.iomap().writeAmplification();
        }
        return SvgChart.bars("write-amplification", "Write amplification per group (device bytes written / bytes"
                + " the jobs wrote)", "x", names, List.of(new SvgChart.Bars("write amplification", values)),
                value -> String.format(Locale.ROOT, "%.3f", value));
    }

    static String folioOrders(RunResult run) {
        int top = 0;
        for (GroupResult group : run.groups()) {
            long[] orders = group.iomap().foliosByOrder();
            for (int order = 0; order < orders.length; order++) {
                if (orders[order] > 0) {
                    top = Math.max(top, order);
                }
            }
        }
        List<String> categories = new ArrayList<>();
        for (int order = 0; order <= top; order++) {
            categories.add("order " + order);
        }
        List<SvgChart.Bars> series = new ArrayList<>();
        for (GroupResult group : run.groups()) {
            long[] orders = group.iomap().foliosByOrder();
            double[] values = new double[top + 1];
            for (int order = 0; order <= top && order < orders.length; order++) {
                values[order] = orders[order];
            }
            series.add(new SvgChart.Bars(groupName(group), values));
        }
        return SvgChart.bars("folio-orders", "Folios made, by order (log2 of their pages)", "folios", categories,
                series, value -> String.format(Locale.ROOT, "%.0f", value));
    }

    private static String groupName(GroupResult group) {
        return group.threads().stream().map(t -> t.job().name()).distinct().reduce((a, b) -> a + ", " + b).orElse("");
    }

    private static String wa(IoStats stats) {
        return stats.appBytesWritten() == 0 ? "-" : String.format(Locale.ROOT, "%.3f", stats.writeAmplification());
    }

    private static String micros(long nanos) {
        return nanos >= 1_000_000 ? (nanos / 1_000_000) + "ms" : (nanos / 1000) + "µs";
    }

    private static String f1(double value) {
        return String.format(Locale.ROOT, "%.1f", value);
    }

    /** One direction's latencies of a group. */
    private record Direction(String name, LatencyStats latency) {
    }

    /** A group's threads added up: both directions, syncs, and the longest thread's measured time. */
    private record Merged(DirectionStats read, DirectionStats write, LatencyStats sync, double seconds) {
        static Merged of(GroupResult group) {
            DirectionStats read = new DirectionStats();
            DirectionStats write = new DirectionStats();
            LatencyStats sync = new LatencyStats();
            long longest = 1;
            for (ThreadResult thread : group.threads()) {
                read.add(thread.read());
                write.add(thread.write());
                sync.add(thread.sync());
                longest = Math.max(longest, thread.runtimeNanos());
            }
            return new Merged(read, write, sync, longest / 1e9);
        }

        List<Direction> directions() {
            List<Direction> directions = new ArrayList<>();
            if (read.ios() > 0) {
                directions.add(new Direction("read", read.clat()));
            }
            if (write.ios() > 0 || read.ios() == 0) {
                directions.add(new Direction("write", write.clat()));
            }
            if (sync.count() > 0) {
                directions.add(new Direction("sync", sync));
            }
            return directions;
        }
    }
}
