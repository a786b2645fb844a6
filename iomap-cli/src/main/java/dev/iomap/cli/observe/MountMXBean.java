package dev.iomap.cli.observe;

import java.util.Map;

/**
 * A mount's counters over JMX ({@code dev.iomap:type=Mount,name="MOUNTPOINT"} in the platform MBean
 * server of the mount's process; {@code jconsole} or any JMX client of the same user attaches to it). The
 * same values as the Prometheus endpoint, under the same names.
 */
public interface MountMXBean {
    /** @return the mount point */
    String getMountPoint();

    /** @return every sample by its Prometheus key ({@code name} or {@code name{label="value"}}) */
    Map<String, Double> getSamples();

    /** @return bytes applications wrote */
    long getAppWrittenBytes();

    /** @return bytes written to the device, data and metadata */
    long getDeviceWrittenBytes();

    /** @return device bytes written per byte applications wrote, since mount */
    double getWriteAmplification();

    /** @return bytes in dirty folios */
    long getDirtyBytes();

    /** @return bytes in folios under writeback */
    long getWritebackBytes();

    /** @return bytes of folios in the cache */
    long getCachedBytes();
}
