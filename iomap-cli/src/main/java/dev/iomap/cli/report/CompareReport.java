package dev.iomap.cli.report;

import dev.iomap.cli.bench.RunResult;
import dev.iomap.cli.jobfile.BenchPlan;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * {@code --compare KEY=V1,V2}: one column per value (the mean over its repeats), then the ratio of
 * each later value to the first ({@code V2/V1}). A value is a page-cache setting, an adapter option or
 * an adapter with its options. Rows: bandwidth, IOPS, latency percentiles, bytes the jobs wrote, data
 * and metadata bytes the device took, write amplification, device traffic, writeback calls, folios
 * created per order, then each adapter counter ({@code adapter: NAME}); rows that are zero for every
 * value are left out.
 */
public final class CompareReport {
    private final String key;
    private final List<String> values;
    private final List<List<RunResult>> runs;

    /** One row: its label, how to read it from a run, and how many decimals to show. */
    private record Metric(String label, String jsonName, ToDoubleFunction<RunMetrics> read, int decimals) {
    }

    /**
     * @param key the {@code --set} key compared
     * @param values its values, in column order
     * @param runs per value, the runs with it (one per repeat)
     */
    public CompareReport(String key, List<String> values, List<List<RunResult>> runs) {
        this.key = key;
        this.values = List.copyOf(values);
        this.runs = runs.stream().map(List::copyOf).toList();
    }

    private List<Metric> metrics() {
        List<Metric> metrics = new ArrayList<>(List.of(
                new Metric("write bw (MiB/s)", "write_bw_mib_s", m -> rate(m.writeBytes(), m) / (1 << 20), 2),
                new Metric("write IOPS", "write_iops", m -> rate(m.writeIos(), m), 0),
                new Metric("write clat p50 (us)", "write_clat_p50_us", m -> m.write().percentile(50) / 1e3, 2),
                new Metric("write clat p99 (us)", "write_clat_p99_us", m -> m.write().percentile(99) / 1e3, 2),
                new Metric("read bw (MiB/s)", "read_bw_mib_s", m -> rate(m.readBytes(), m) / (1 << 20), 2),
                new Metric("read IOPS", "read_iops", m -> rate(m.readIos(), m), 0),
                new Metric("read clat p50 (us)", "read_clat_p50_us", m -> m.read().percentile(50) / 1e3, 2),
                new Metric("read clat p99 (us)", "read_clat_p99_us", m -> m.read().percentile(99) / 1e3, 2),
                new Metric("sync p99 (us)", "sync_p99_us", m -> m.sync().percentile(99) / 1e3, 2),
                new Metric("app written (MiB)", "app_written_mib", m -> m.appBytesWritten() / 1048576.0, 2),
                new Metric("data written (MiB)", "data_written_mib", m -> m.dataBytesWritten() / 1048576.0, 2),
                new Metric("metadata written (MiB)", "metadata_written_mib",
                        m -> m.metadataBytesWritten() / 1048576.0, 2),
                new Metric("write amplification", "write_amplification", RunMetrics::writeAmplification, 3),
                new Metric("device written (MiB)", "device_written_mib", m -> m.deviceBytesWritten() / 1048576.0, 2),
                new Metric("device read (MiB)", "device_read_mib", m -> m.deviceBytesRead() / 1048576.0, 2),
                new Metric("map_blocks calls", "map_blocks_calls", m -> m.mapBlocksCalls(), 0),
                new Metric("ioends", "ioends", m -> m.ioends(), 0),
                new Metric("folio states allocated", "folio_states_allocated", m -> m.folioStatesAllocated(), 0)));
        for (int order = 0; order <= dev.iomap.api.PageCacheOptions.MAX_ORDER; order++) {
            int o = order;
            metrics.add(new Metric("folios of order " + order, "folios_order_" + order, m -> m.folios(o), 0));
        }
        Set<String> counters = new TreeSet<>();
        runs.forEach(list -> list.forEach(run -> run.groups().forEach(group ->
                counters.addAll(group.iomap().adapterCounters().keySet()))));
        for (String counter : counters) {
            metrics.add(new Metric("adapter: " + counter, "adapter." + counter,
                    m -> m.adapterCounters().getOrDefault(counter, 0L), 0));
        }
        return metrics;
    }

    private static double rate(long amount, RunMetrics m) {
        return m.seconds() == 0 ? 0 : amount / m.seconds();
    }

    /** @return each shown metric's mean per value */
    private List<Row> rows() {
        List<List<RunMetrics>> measured = runs.stream()
                .map(list -> list.stream().map(RunMetrics::of).toList())
                .toList();
        List<Row> rows = new ArrayList<>();
        for (Metric metric : metrics()) {
            double[] means = new double[values.size()];
            boolean any = false;
            for (int v = 0; v < values.size(); v++) {
                means[v] = measured.get(v).stream().mapToDouble(metric.read()).average().orElse(0);
                any |= means[v] != 0;
            }
            if (any) {
                rows.add(new Row(metric, means));
            }
        }
        return rows;
    }

    private record Row(Metric metric, double[] means) {
        String ratio(int value) {
            return means[0] == 0 ? "-" : String.format(Locale.ROOT, "%.3f", means[value] / means[0]);
        }
    }

    /**
     * @param settingsLine where the runs ran, for the title
     * @return the table, with a title line
     */
    public String text(String settingsLine) {
        List<Row> rows = rows();
        List<String> header = new ArrayList<>();
        header.add("metric");
        values.forEach(value -> header.add(key + "=" + value));
        for (int v = 1; v < values.size(); v++) {
            header.add(values.get(v) + "/" + values.getFirst());
        }
        List<List<String>> table = new ArrayList<>();
        table.add(header);
        for (Row row : rows) {
            List<String> cells = new ArrayList<>();
            cells.add(row.metric().label());
            for (double mean : row.means()) {
                cells.add(String.format(Locale.ROOT, "%." + row.metric().decimals() + "f", mean));
            }
            for (int v = 1; v < values.size(); v++) {
                cells.add(row.ratio(v));
            }
            table.add(cells);
        }
        int repeats = runs.getFirst().size();
        var out = new StringBuilder();
        out.append("compare ").append(key).append(": ").append(String.join(" vs ", values)).append(" (")
                .append(settingsLine).append("; mean of ").append(repeats).append(" run").append(repeats == 1 ? "" : "s")
                .append(" each, alternating)\n\n");
        out.append(align(table));
        return out.toString();
    }

    private static String align(List<List<String>> table) {
        int columns = table.getFirst().size();
        int[] widths = new int[columns];
        for (List<String> row : table) {
            for (int c = 0; c < columns; c++) {
                widths[c] = Math.max(widths[c], row.get(c).length());
            }
        }
        var out = new StringBuilder();
        for (List<String> row : table) {
            var line = new StringBuilder(String.format("%-" + widths[0] + "s", row.getFirst()));
            for (int c = 1; c < columns; c++) {
                line.append("  ").append(String.format("%" + widths[c] + "s", row.get(c)));
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }

    /**
     * @param plan the jobs
     * @param version the program's version
     * @return the comparison as JSON: the table, then every run in fio's structure
     */
    public String json(BenchPlan plan, String version) {
        JsonWriter json = new JsonWriter();
        json.beginObject().beginObject("compare").field("key", key).field("repeat", runs.getFirst().size());
        json.beginArray("values");
        for (int v = 0; v < values.size(); v++) {
            var settings = runs.get(v).getFirst().settings();
            json.beginObject().field("value", values.get(v)).field("adapter", settings.adapter());
            json.beginObject("fs_options");
            settings.adapterOptions().forEach(json::field);
            json.endObject().endObject();
        }
        json.endArray().beginObject("metrics");
        for (Row row : rows()) {
            json.beginObject(row.metric().jsonName());
            for (int v = 0; v < values.size(); v++) {
                json.field(values.get(v), row.means()[v]);
            }
            for (int v = 1; v < values.size(); v++) {
                json.field(values.get(v) + "/" + values.getFirst(), row.means()[0] == 0 ? 0 : row.means()[v] / row.means()[0]);
            }
            json.endObject();
        }
        json.endObject().endObject().beginArray("runs");
        for (int repeat = 0; repeat < runs.getFirst().size(); repeat++) {
            for (List<RunResult> valueRuns : runs) {
                JsonReport.write(json, valueRuns.get(repeat), plan, version);
            }
        }
        json.endArray().endObject();
        return json.text() + "\n";
    }
}
