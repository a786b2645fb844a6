package dev.iomap.cli.bench;

import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Where and how a plan runs.
 *
 * @param adapter the adapter's name
 * @param device the device
 * @param blockSize the filesystem block size to format with
 * @param pageCache the mount's page-cache options
 * @param backgroundWriteback whether the flusher runs
 * @param adapterOptions the adapter's own mount options ({@code -O}), in the order given (copied)
 * @param zones for an adapter that requires a zoned device, the zones to emulate over the device
 *     (which then holds them and their zone state); empty for a plain device
 */
public record BenchSettings(String adapter, DeviceSpec device, int blockSize, PageCacheOptions pageCache,
        boolean backgroundWriteback, Map<String, String> adapterOptions, Optional<ZoneOptions> zones) {

    /** Validates and copies. */
    public BenchSettings {
        Objects.requireNonNull(adapter, "adapter");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(pageCache, "pageCache");
        Objects.requireNonNull(zones, "zones");
        adapterOptions = Collections.unmodifiableMap(new LinkedHashMap<>(adapterOptions));
    }

    /** @return the mount options these settings mount with */
    public MountOptions mountOptions() {
        return new MountOptions(pageCache, backgroundWriteback, adapterOptions);
    }
}
