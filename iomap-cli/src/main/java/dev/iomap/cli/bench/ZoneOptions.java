package dev.iomap.cli.bench;

import dev.iomap.cli.Units;
import dev.iomap.cli.UsageException;
import dev.iomap.devices.ZoneLayout;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;

/**
 * The zones of an emulated zoned device ({@link dev.iomap.devices.ZonedDevice}) for an adapter that
 * requires one (zonefs-like): the settings among {@code mkfs -o KEY=VALUE} that make mkfs write a
 * zoned image (whose geometry and zone state the image carries in front of its zones) instead of a
 * plain one, taken out of the properties before the rest go to the adapter; and bench's
 * {@code --zones}.
 *
 * <ul>
 *   <li>{@code zone-size=SIZE}: bytes per zone (required for a zoned image), a multiple of the block size;</li>
 *   <li>{@code conventional=N}: how many zones, from zone 0, are conventional (default 0);</li>
 *   <li>{@code capacity=SIZE}: writable bytes of each sequential zone (default the zone size);</li>
 *   <li>{@code max-open=N}: the device's open-zone limit (default 0: no limit).</li>
 * </ul>
 *
 * @param zoneSize bytes per zone; 0 when no zone setting was given
 * @param capacity writable bytes per sequential zone; 0 for the zone size
 * @param conventional conventional zones
 * @param maxOpen open-zone limit, 0 for none
 * @param given whether any zone setting was given
 * @param zoneCount how many zones; 0 for as many as the device's size holds
 */
public record ZoneOptions(long zoneSize, long capacity, int conventional, int maxOpen, boolean given, int zoneCount) {

    /** The zone setting keys, in the order messages list them. */
    public static final List<String> KEYS = List.of("zone-size", "conventional", "capacity", "max-open");

    /**
     * Takes the zone settings out of {@code properties}.
     *
     * @param properties mkfs's {@code -o} settings; the zone settings are removed from it
     * @return the zone settings
     * @throws UsageException if a value is not a size or a count, or a count or size is negative
     */
    public static ZoneOptions take(Map<String, String> properties) throws UsageException {
        Map<String, String> zone = new LinkedHashMap<>();
        for (String key : KEYS) {
            String value = properties.remove(key);
            if (value != null) {
                zone.put(key, value);
            }
        }
        if (zone.isEmpty()) {
            return new ZoneOptions(0, 0, 0, 0, false, 0);
        }
        if (!zone.containsKey("zone-size")) {
            throw new UsageException("-o " + String.join(",", zone.keySet()) + " describe zones: give -o zone-size=SIZE too");
        }
        long zoneSize = size(zone, "zone-size");
        long capacity = zone.containsKey("capacity") ? size(zone, "capacity") : 0;
        return new ZoneOptions(zoneSize, capacity, count(zone, "conventional"), count(zone, "max-open"), true, 0);
    }

    /**
     * @param layout the zones of an existing zoned device
     * @return settings that make exactly those zones again
     */
    public static ZoneOptions of(ZoneLayout layout) {
        return new ZoneOptions(layout.zoneSize(), layout.zoneCapacity(), layout.conventionalZones(),
                layout.maxOpenZones(), true, layout.zoneCount());
    }

    /**
     * @param text bench's {@code --zones} value: {@code zone-size=SIZE[,conventional=N,capacity=SIZE,max-open=N]}
     * @return the settings
     * @throws UsageException if it is not that
     */
    public static ZoneOptions parse(String text) throws UsageException {
        Map<String, String> properties = new LinkedHashMap<>();
        for (String setting : text.split(",", -1)) {
            int equals = setting.indexOf('=');
            if (equals <= 0) {
                throw new UsageException("bad --zones '" + text + "': use zone-size=SIZE[,conventional=N,capacity=SIZE,"
                        + "max-open=N]");
            }
            properties.put(setting.substring(0, equals), setting.substring(equals + 1));
        }
        ZoneOptions zones = take(properties);
        if (!properties.isEmpty()) {
            throw new UsageException("bad --zones '" + text + "': unknown " + String.join(", ", properties.keySet())
                    + " (keys: " + String.join(", ", KEYS) + ")");
        }
        if (!zones.given()) {
            throw new UsageException("bad --zones '" + text + "': give zone-size=SIZE");
        }
        return zones;
    }

    /**
     * @param zonedBytes the zoned device's size (mkfs's --size): as many whole zones as fit, unless
     *     {@link #zoneCount} says how many
     * @param blockSize the device's block size, which zone size and capacity must be multiples of
     * @return the layout
     * @throws UsageException if the sizes do not fit: no zone fits, a size is not whole blocks, the
     *     capacity exceeds the zone size, or there are more conventional zones than zones
     */
    public ZoneLayout layout(long zonedBytes, int blockSize) throws UsageException {
        long zoneCapacity = capacity == 0 ? zoneSize : capacity;
        if (zoneSize % blockSize != 0 || zoneCapacity % blockSize != 0) {
            throw new UsageException("bad zones: zone-size " + zoneSize + " and capacity " + zoneCapacity
                    + " must be multiples of the block size " + blockSize);
        }
        long zones = zoneCount > 0 ? zoneCount : zonedBytes / zoneSize;
        if (zones < 1 || zones > Integer.MAX_VALUE) {
            throw new UsageException("bad zones: --size " + zonedBytes + " holds " + zones + " zones of " + zoneSize
                    + " bytes (at least 1, at most " + Integer.MAX_VALUE + ")");
        }
        try {
            return new ZoneLayout(zoneSize, zoneCapacity, (int) zones, conventional, maxOpen);
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad zones: " + e.getMessage());
        }
    }

    private static long size(Map<String, String> zone, String key) throws UsageException {
        try {
            long bytes = Units.parseSize(zone.get(key), 1024);
            if (bytes <= 0) {
                throw new IllegalArgumentException("must be positive");
            }
            return bytes;
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad -o " + key + "='" + zone.get(key) + "': " + e.getMessage());
        }
    }

    private static int count(Map<String, String> zone, String key) throws UsageException {
        String value = zone.get(key);
        if (value == null) {
            return 0;
        }
        try {
            int count = Integer.parseInt(value);
            if (count < 0) {
                throw new NumberFormatException("negative");
            }
            return count;
        } catch (NumberFormatException e) {
            throw new UsageException("bad -o " + key + "='" + value + "': not a count of zones (0 or more)");
        }
    }

    /** @return how mkfs's report describes the layout: "N zones of SIZE (C conventional, ...)" */
    public static String describe(ZoneLayout layout) {
        return layout.zoneCount() + " zones of " + layout.zoneSize() + " bytes (" + layout.conventionalZones()
                + " conventional, capacity " + layout.zoneCapacity() + ", max open "
                + (layout.maxOpenZones() == 0 ? "unlimited" : layout.maxOpenZones()) + ")";
    }
}
