package dev.iomap.api;

import dev.iomap.device.DeviceStats;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * A snapshot of what the page cache and its device did: the numbers behind write amplification.
 *
 * @param appBytesWritten bytes applications asked to write
 * @param appBytesRead bytes applications read
 * @param device the device's own counters
 * @param mapBlocksCalls calls of {@link dev.iomap.spi.WritebackOps#writebackRange} (each maps one dirty range)
 * @param ioends ioends submitted to the device
 * @param folioStatesAllocated per-block folio states created
 * @param foliosByOrder folios created, indexed by order (copied)
 * @param adapterCounters the adapter's own counters by name (lock acquisitions, journal commits...),
 *     as {@link dev.iomap.spi.SuperOps#counters()} gives them; sorted by name, copied
 */
public record IoStats(
        long appBytesWritten,
        long appBytesRead,
        DeviceStats device,
        long mapBlocksCalls,
        long ioends,
        long folioStatesAllocated,
        long[] foliosByOrder,
        Map<String, Long> adapterCounters) {

    /** Copies the per-order counts and the adapter's counters. */
    public IoStats {
        foliosByOrder = foliosByOrder.clone();
        adapterCounters = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(adapterCounters));
    }

    /**
     * A snapshot without adapter counters.
     *
     * @param appBytesWritten bytes applications asked to write
     * @param appBytesRead bytes applications read
     * @param device the device's own counters
     * @param mapBlocksCalls calls of {@link dev.iomap.spi.WritebackOps#writebackRange} (each maps one dirty range)
     * @param ioends ioends submitted to the device
     * @param folioStatesAllocated per-block folio states created
     * @param foliosByOrder folios created, indexed by order (copied)
     */
    public IoStats(long appBytesWritten, long appBytesRead, DeviceStats device, long mapBlocksCalls, long ioends,
            long folioStatesAllocated, long[] foliosByOrder) {
        this(appBytesWritten, appBytesRead, device, mapBlocksCalls, ioends, folioStatesAllocated, foliosByOrder,
                Map.of());
    }

    /**
     * @param counters the adapter's counters
     * @return this snapshot with {@code counters} as its adapter counters
     */
    public IoStats withAdapterCounters(Map<String, Long> counters) {
        return new IoStats(appBytesWritten, appBytesRead, device, mapBlocksCalls, ioends, folioStatesAllocated,
                foliosByOrder, counters);
    }

    /**
     * @param name an adapter counter's name
     * @return its value, 0 if the adapter does not report it
     */
    public long adapterCounter(String name) {
        return adapterCounters.getOrDefault(name, 0L);
    }

    /**
     * Device bytes written (data and metadata) per byte the application wrote.
     *
     * @return the ratio, or 0 if the application wrote nothing
     */
    public double writeAmplification() {
        return appBytesWritten == 0 ? 0 : (double) device.bytesWritten() / appBytesWritten;
    }

    /** @return a copy of the folios created per order */
    @Override
    public long[] foliosByOrder() {
        return foliosByOrder.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IoStats other
                && appBytesWritten == other.appBytesWritten
                && appBytesRead == other.appBytesRead
                && device.equals(other.device)
                && mapBlocksCalls == other.mapBlocksCalls
                && ioends == other.ioends
                && folioStatesAllocated == other.folioStatesAllocated
                && Arrays.equals(foliosByOrder, other.foliosByOrder)
                && adapterCounters.equals(other.adapterCounters);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(appBytesWritten) * 31 + Arrays.hashCode(foliosByOrder);
    }

    @Override
    public String toString() {
        return "IoStats[appBytesWritten=" + appBytesWritten + ", appBytesRead=" + appBytesRead
                + ", device=" + device + ", mapBlocksCalls=" + mapBlocksCalls + ", ioends=" + ioends
                + ", folioStatesAllocated=" + folioStatesAllocated
                + ", foliosByOrder=" + Arrays.toString(foliosByOrder)
                + (adapterCounters.isEmpty() ? "" : ", adapterCounters=" + adapterCounters) + "]";
    }
}
