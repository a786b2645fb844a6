package dev.iomap.cli.report;

import dev.iomap.cli.bench.LatencyStats;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;

/** fio's number formats: {@code num2str} and the latency lines of its normal output. */
public final class FioFormat {
    private static final String[] SI = {"", "k", "M", "G", "T", "P", "E"};
    private static final String[] IEC = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

    private FioFormat() {
    }

    /**
     * fio's {@code num2str}: divides by 1000 (or 1024) until the number has at most {@code maxDigits}
     * digits, then fills the room left with decimals: {@code 15.3k}, {@code 35.7MiB/s}, {@code 512KiB}.
     *
     * @param value a count, at least 0
     * @param maxDigits digits to show (fio's default is 4)
     * @param binary powers of 1024 with IEC prefixes, else of 1000 with SI prefixes
     * @param unit what follows the prefix ({@code "B"}, {@code "B/s"}, or empty)
     * @return the text
     */
    public static String num2str(long value, int maxDigits, boolean binary, String unit) {
        String[] prefixes = binary ? IEC : SI;
        long thousand = binary ? 1024 : 1000;
        long num = Math.max(0, value);
        long modulo = -1;
        int prefix = 0;
        while (prefix < prefixes.length - 1 && Long.toString(num).length() > maxDigits) {
            modulo = num % thousand;
            num /= thousand;
            prefix++;
        }
        if (modulo < 0) {
            return num + prefixes[prefix] + unit;
        }
        int decimals = maxDigits - Long.toString(num).length() - 1;
        if (decimals <= 0) {
            return (modulo >= thousand / 2 ? num + 1 : num) + prefixes[prefix] + unit;
        }
        String fraction = String.format(Locale.ROOT, "%." + decimals + "f", modulo / (double) thousand);
        if (fraction.startsWith("1")) {
            num++;
            fraction = "0." + "0".repeat(decimals);
        }
        return num + "." + fraction.substring(2) + prefixes[prefix] + unit;
    }

    /**
     * @param bytes a size
     * @return it in the largest binary unit that divides it exactly: {@code 2MiB}, {@code 96KiB},
     *     {@code 1000B}
     */
    public static String exactBytes(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        long value = bytes;
        int unit = 0;
        while (unit < units.length - 1 && value != 0 && value % 1024 == 0) {
            value /= 1024;
            unit++;
        }
        return value + units[unit];
    }

    /** The unit fio shows a set of latencies in, and the divisor from nanoseconds. */
    enum TimeUnit {
        NSEC("nsec", 1), USEC("usec", 1_000), MSEC("msec", 1_000_000);

        final String label;
        final long divisor;

        TimeUnit(String label, long divisor) {
            this.label = label;
            this.divisor = divisor;
        }
    }

    /**
     * fio's {@code display_lat}: {@code "    clat (nsec): min=2965, max=98687, avg=13602.79, stdev=16721.08"}.
     *
     * @param name {@code clat}, {@code  lat} or {@code sync}
     * @param stats the latencies
     * @return the line, without line ending
     */
    static String latencyLine(String name, LatencyStats stats) {
        long min = stats.min();
        long max = stats.max();
        double mean = stats.mean();
        double dev = stats.stddev();
        TimeUnit unit = TimeUnit.NSEC;
        if (min > 2_000_000 && max > 99_999_999L && dev > 1_000_000.0) {
            unit = TimeUnit.MSEC;
        } else if (min > 2_000 && max > 99_999 && dev > 1_000.0) {
            unit = TimeUnit.USEC;
        }
        return String.format(Locale.ROOT, "    %s (%s): min=%s, max=%s, avg=%5.02f, stdev=%5.02f", name, unit.label,
                num2str(min / unit.divisor, 6, false, ""), num2str(max / unit.divisor, 6, false, ""),
                mean / unit.divisor, dev / unit.divisor);
    }

    /**
     * fio's {@code show_clat_percentiles}: a title line and rows of four percentiles.
     *
     * @param name {@code clat} or {@code sync}
     * @param stats the latencies
     * @param percentiles which
     * @return the lines, without line endings
     */
    static List<String> percentileLines(String name, LatencyStats stats, List<Double> percentiles) {
        long[] values = percentiles.stream().mapToLong(stats::percentile).toArray();
        long min = Arrays.stream(values).min().orElse(0);
        long max = Arrays.stream(values).max().orElse(0);
        TimeUnit unit = TimeUnit.NSEC;
        if (min > 2_000_000 && max > 99_999_999L) {
            unit = TimeUnit.MSEC;
        } else if (min > 2_000 && max > 99_999) {
            unit = TimeUnit.USEC;
        }
        int width = Math.max(5, Long.toString(Math.max(1, max / unit.divisor)).length());
        int perLine = (80 - 7) / (2 + 10 + width);
        List<String> lines = new ArrayList<>();
        lines.add("    " + name + " percentiles (" + unit.label + "):");
        var line = new StringBuilder("     |");
        for (int i = 0; i < values.length; i++) {
            long scaled = values[i];
            for (long d = unit.divisor; d > 1; d /= 1000) {
                scaled = (scaled + 999) / 1000;
            }
            boolean last = i == values.length - 1;
            line.append(String.format(Locale.ROOT, " %5.2fth=[%" + width + "d]%c", percentiles.get(i), scaled,
                    last ? ' ' : ','));
            if (last || i % perLine == perLine - 1) {
                lines.add(line.toString().stripTrailing());
                line = new StringBuilder("     |");
            }
        }
        return lines;
    }

    /** fio's latency distribution bucket bounds, in nanoseconds, per unit. */
    private static final long[] BOUNDS = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};

    /**
     * fio's {@code show_latencies}: the share of I/Os below each bound, nonzero buckets only, five
     * to a line: {@code "  lat (usec)   : 4=53.91%, 10=10.94%"}.
     *
     * @param stats the completion latencies of every direction together
     * @return the lines, without line endings
     */
    static List<String> distributionLines(LatencyStats stats) {
        List<String> lines = new ArrayList<>();
        if (stats.count() == 0) {
            return lines;
        }
        for (TimeUnit unit : TimeUnit.values()) {
            List<String> parts = new ArrayList<>();
            for (Bucket bucket : buckets(unit)) {
                long count = stats.countBetween(bucket.from, bucket.to);
                if (count > 0) {
                    parts.add(String.format(Locale.ROOT, "%s=%3.2f%%", bucket.label, share(count, stats.count())));
                }
            }
            for (int i = 0; i < parts.size(); i += 5) {
                lines.add("  lat (" + unit.label + ")   : " + String.join(", ", parts.subList(i, Math.min(parts.size(), i + 5))));
            }
        }
        return lines;
    }

    /**
     * @param stats latencies
     * @param unit which unit's buckets
     * @return the share (percent) in each of fio's buckets of that unit, keyed as fio's JSON
     */
    static LinkedHashMap<String, Double> distribution(LatencyStats stats, TimeUnit unit) {
        var shares = new LinkedHashMap<String, Double>();
        for (Bucket bucket : buckets(unit)) {
            shares.put(bucket.label, share(stats.countBetween(bucket.from, bucket.to), stats.count()));
        }
        return shares;
    }

    /** A percentage as fio's {@code stat_calc_lat}: a bucket with any I/O shows at least 0.01. */
    private static double share(long count, long total) {
        if (count == 0 || total == 0) {
            return 0;
        }
        return Math.max(0.01, 100.0 * count / total);
    }

    private record Bucket(String label, long from, long to) {
    }

    private static List<Bucket> buckets(TimeUnit unit) {
        List<Bucket> buckets = new ArrayList<>();
        long from = unit.divisor == 1 ? 0 : unit.divisor;
        for (long bound : BOUNDS) {
            buckets.add(new Bucket(Long.toString(bound), from, bound * unit.divisor));
            from = bound * unit.divisor;
        }
        if (unit == TimeUnit.MSEC) {
            buckets.add(new Bucket("2000", from, 2000 * unit.divisor));
            buckets.add(new Bucket(">=2000", 2000 * unit.divisor, Long.MAX_VALUE));
        }
        return buckets;
    }
}
