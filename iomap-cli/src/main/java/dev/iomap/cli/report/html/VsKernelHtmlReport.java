package dev.iomap.cli.report.html;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code bench/vs-kernel.sh --report FILE}: the script's per-run lines as one HTML page: the ratio table
 * (ours / kernel and FUSE / kernel by MiB/s, medians over the rounds) as a bar chart, bandwidth and
 * latency p50/p99 per workload and system, and the table itself.
 */
public final class VsKernelHtmlReport {
    private static final List<String> SYSTEMS = List.of("kernel", "ours", "fuse");

    private VsKernelHtmlReport() {
    }

    /**
     * One run of one workload on one system: a line of the script's results file.
     *
     * @param workload the workload
     * @param system kernel, ours or fuse
     * @param mibPerSecond bandwidth
     * @param iops I/O operations per second
     * @param p50Micros median completion latency
     * @param p99Micros 99th percentile completion latency
     */
    public record Run(String workload, String system, double mibPerSecond, double iops, double p50Micros,
            double p99Micros) {

        /**
         * @param line {@code WORKLOAD ROUND SYSTEM MiB/s IOPS p50us p99us WA}, tab-separated
         * @return the run
         * @throws IllegalArgumentException if the line has fewer fields or a number does not parse
         */
        public static Run parse(String line) {
            String[] f = line.split("\t");
            if (f.length < 7) {
                throw new IllegalArgumentException("a vs-kernel result line has 8 tab-separated fields"
                        + " (workload round system MiB/s IOPS p50 p99 WA), got: " + line);
            }
            return new Run(f[0], f[2], Double.parseDouble(f[3]), Double.parseDouble(f[4]), Double.parseDouble(f[5]),
                    Double.parseDouble(f[6]));
        }
    }

    /**
     * @param runs every run, in the order the script made them
     * @param header the script's header lines (machine, date, settings), shown as they are
     * @return the page
     */
    public static String of(List<Run> runs, String header) {
        Map<String, Map<String, List<Run>>> cells = new LinkedHashMap<>();
        for (Run run : runs) {
            cells.computeIfAbsent(run.workload(), w -> new LinkedHashMap<>())
                    .computeIfAbsent(run.system(), s -> new ArrayList<>()).add(run);
        }
        List<String> workloads = new ArrayList<>(cells.keySet());
        HtmlPage page = new HtmlPage("iomap4j against the kernel");
        header.lines().filter(line -> !line.isBlank()).forEach(page::paragraph);
        page.chart(ratios(cells, workloads));
        page.chart(metric(cells, workloads, "bandwidth", "Bandwidth (median over the rounds)", "MiB/s", Run::mibPerSecond));
        page.chart(metric(cells, workloads, "latency-p50", "Completion latency p50", "µs", Run::p50Micros));
        page.chart(metric(cells, workloads, "latency-p99", "Completion latency p99", "µs", Run::p99Micros));
        List<List<String>> rows = new ArrayList<>();
        for (String w : workloads) {
            double kernel = median(cells.get(w).get("kernel"), Run::mibPerSecond);
            for (String system : SYSTEMS) {
                List<Run> cell = cells.get(w).get(system);
                if (cell == null) {
                    continue;
                }
                double bw = median(cell, Run::mibPerSecond);
                rows.add(List.of(w, system, f1(bw), String.format(Locale.ROOT, "%.0f", median(cell, Run::iops)),
                        f1(median(cell, Run::p50Micros)), f1(median(cell, Run::p99Micros)),
                        kernel > 0 ? String.format(Locale.ROOT, "%.2fx", bw / kernel) : "-"));
            }
        }
        page.table(List.of("workload", "system", "MiB/s", "IOPS", "p50 µs", "p99 µs", "/ kernel"), rows);
        return page.html();
    }

    private static String ratios(Map<String, Map<String, List<Run>>> cells, List<String> workloads) {
        List<SvgChart.Bars> series = new ArrayList<>();
        for (String system : List.of("ours", "fuse")) {
            double[] values = new double[workloads.size()];
            boolean any = false;
            for (int i = 0; i < values.length; i++) {
                Map<String, List<Run>> cell = cells.get(workloads.get(i));
                double kernel = median(cell.get("kernel"), Run::mibPerSecond);
                double mine = median(cell.get(system), Run::mibPerSecond);
                values[i] = kernel > 0 ? mine / kernel : 0;
                any |= cell.containsKey(system);
            }
            if (any) {
                series.add(new SvgChart.Bars(system + " / kernel", values));
            }
        }
        return SvgChart.bars("ratios", "MiB/s relative to the kernel (1.00 = as fast)", "ratio", workloads, series,
                value -> String.format(Locale.ROOT, "%.2f", value));
    }

    private static String metric(Map<String, Map<String, List<Run>>> cells, List<String> workloads, String id,
            String title, String unit, java.util.function.ToDoubleFunction<Run> value) {
        List<SvgChart.Bars> series = new ArrayList<>();
        for (String system : SYSTEMS) {
            double[] values = new double[workloads.size()];
            boolean any = false;
            for (int i = 0; i < values.length; i++) {
                List<Run> cell = cells.get(workloads.get(i)).get(system);
                values[i] = median(cell, value);
                any |= cell != null;
            }
            if (any) {
                series.add(new SvgChart.Bars(system, values));
            }
        }
        return SvgChart.bars(id, title, unit, workloads, series, VsKernelHtmlReport::f1);
    }

    private static double median(List<Run> runs, java.util.function.ToDoubleFunction<Run> value) {
        if (runs == null || runs.isEmpty()) {
            return 0;
        }
        double[] values = runs.stream().mapToDouble(value).sorted().toArray();
        int mid = values.length / 2;
        return values.length % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
    }

    private static String f1(double value) {
        return String.format(Locale.ROOT, "%.1f", value);
    }
}
