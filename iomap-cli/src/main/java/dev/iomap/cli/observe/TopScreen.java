package dev.iomap.cli.observe;

import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * One frame of {@code iomap top}: what a mount did in the last interval (rates) and where its cache
 * stands (gauges), from two snapshots of its samples ({@link MountSamples}). Pure: the lines only, no
 * terminal control.
 */
public final class TopScreen {
    private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB"};

    private TopScreen() {
    }

    /**
     * @param mount the mount shown
     * @param previous the snapshot an interval ago (empty for the first frame: its rates are 0)
     * @param current the snapshot now
     * @param seconds the interval's length
     * @param time the wall-clock time of {@code current}
     * @return the frame's lines
     */
    public static List<String> render(MountInfo mount, Map<String, Double> previous, Map<String, Double> current,
            double seconds, LocalTime time) {
        Delta d = new Delta(previous, current, seconds);
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "iomap top - %s (pid %d)  %s  every %.0fs    q: quit",
                mount.mountPoint(), mount.pid(), time.format(DateTimeFormatter.ofPattern("HH:mm:ss")), seconds));
        lines.add("");
        lines.add(String.format(Locale.ROOT, "%-14s %14s %14s", "", "per second", "since mount"));
        row(lines, "app write", d, "iomap_app_written_bytes_total");
        row(lines, "app read", d, "iomap_app_read_bytes_total");
        String data = "iomap_device_written_bytes_total{purpose=\"data\"}";
        String metadata = "iomap_device_written_bytes_total{purpose=\"metadata\"}";
        lines.add(String.format(Locale.ROOT, "%-14s %14s %14s   data %s/s, metadata %s/s", "device write",
                bytes(d.rate(data) + d.rate(metadata)) + "/s", bytes(d.now(data) + d.now(metadata)),
                bytes(d.rate(data)), bytes(d.rate(metadata))));
        row(lines, "device read", d, "iomap_device_read_bytes_total");
        double appRate = d.rate("iomap_app_written_bytes_total");
        lines.add(String.format(Locale.ROOT, "%-14s %14s %14s", "write amp",
                appRate == 0 ? "-" : String.format(Locale.ROOT, "%.2fx", (d.rate(data) + d.rate(metadata)) / appRate),
                String.format(Locale.ROOT, "%.2fx", d.now("iomap_write_amplification_ratio"))));
        double hits = d.rate("iomap_cache_read_hits_total");
        double misses = d.rate("iomap_cache_read_misses_total");
        lines.add(String.format(Locale.ROOT, "%-14s %14s %14s   %.0f hits/s, %.0f misses/s", "cache hits",
                hits + misses == 0 ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * hits / (hits + misses)),
                ratio(d.now("iomap_cache_read_hits_total"), d.now("iomap_cache_read_misses_total")), hits, misses));
        lines.add(String.format(Locale.ROOT, "%-14s %14.0f %14.0f", "ioends", d.rate("iomap_ioends_total"),
                d.now("iomap_ioends_total")));
        lines.add(String.format(Locale.ROOT, "%-14s %14.0f %14.0f", "map_blocks", d.rate("iomap_map_blocks_calls_total"),
                d.now("iomap_map_blocks_calls_total")));
        lines.add("");
        lines.add(String.format(Locale.ROOT, "%-14s %14s   of %s budget", "cached", bytes(d.now("iomap_cache_bytes")),
                bytes(d.now("iomap_cache_budget_bytes"))));
        lines.add(String.format(Locale.ROOT, "%-14s %14s", "dirty", bytes(d.now("iomap_cache_dirty_bytes"))));
        lines.add(String.format(Locale.ROOT, "%-14s %14s", "writeback", bytes(d.now("iomap_cache_writeback_bytes"))));
        lines.add("");
        lines.add("folios made by order (per second / since mount):");
        lines.add("  " + orders(d));
        glocks(lines, d);
        return lines;
    }

    private static void glocks(List<String> lines, Delta d) {
        String grants = "iomap_adapter_events_total{counter=\"glock_grants\"}";
        if (!d.current.containsKey(grants)) {
            return;
        }
        String demotions = "iomap_adapter_events_total{counter=\"glock_demotions\"}";
        String cached = "iomap_adapter_events_total{counter=\"glock_cached_holds\"}";
        lines.add("");
        lines.add(String.format(Locale.ROOT, "%-14s %14.0f %14.0f   (uses that waited for the lock manager)",
                "glock waits", d.rate(grants), d.now(grants)));
        lines.add(String.format(Locale.ROOT, "%-14s %14.0f %14.0f", "glock cached", d.rate(cached), d.now(cached)));
        lines.add(String.format(Locale.ROOT, "%-14s %14.0f %14.0f", "glock demotes", d.rate(demotions),
                d.now(demotions)));
    }

    private static String orders(Delta d) {
        Map<Integer, String> byOrder = new TreeMap<>();
        String prefix = "iomap_folios_created_total{order=\"";
        for (String key : d.current.keySet()) {
            if (key.startsWith(prefix)) {
                int order = Integer.parseInt(key.substring(prefix.length(), key.length() - 2));
                byOrder.put(order, String.format(Locale.ROOT, "%d: %.0f/%.0f", order, d.rate(key), d.now(key)));
            }
        }
        return byOrder.isEmpty() ? "none yet" : String.join("   ", byOrder.values());
    }

    private static void row(List<String> lines, String label, Delta d, String key) {
        lines.add(String.format(Locale.ROOT, "%-14s %14s %14s", label, bytes(d.rate(key)) + "/s", bytes(d.now(key))));
    }

    private static String ratio(double hits, double misses) {
        return hits + misses == 0 ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * hits / (hits + misses));
    }

    /**
     * @param value bytes
     * @return the value with a binary unit and one decimal, e.g. {@code 12.5 MiB}
     */
    static String bytes(double value) {
        int unit = 0;
        double scaled = value;
        while (Math.abs(scaled) >= 1024 && unit < UNITS.length - 1) {
            scaled /= 1024;
            unit++;
        }
        return unit == 0 ? String.format(Locale.ROOT, "%.0f B", scaled)
                : String.format(Locale.ROOT, "%.1f %s", scaled, UNITS[unit]);
    }

    /** The change of each sample between two snapshots. */
    private record Delta(Map<String, Double> previous, Map<String, Double> current, double seconds) {
        double now(String key) {
            return current.getOrDefault(key, 0.0);
        }

        /** @return the change per second; 0 on the first frame, which has nothing to compare with */
        double rate(String key) {
            if (previous.isEmpty()) {
                return 0;
            }
            return Math.max(0, now(key) - previous.getOrDefault(key, 0.0)) / seconds;
        }
    }
}
