package dev.iomap.cli.bench;

import dev.iomap.api.PageCacheOptions;
import java.util.Objects;

/**
 * Where and how a plan runs.
 *
 * @param adapter the adapter's name
 * @param device the device
 * @param blockSize the filesystem block size to format with
 * @param pageCache the mount's page-cache options
 * @param backgroundWriteback whether the flusher runs
 */
public record BenchSettings(String adapter, DeviceSpec device, int blockSize, PageCacheOptions pageCache,
        boolean backgroundWriteback) {

    /** Validates. */
    public BenchSettings {
        Objects.requireNonNull(adapter, "adapter");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(pageCache, "pageCache");
    }
}
