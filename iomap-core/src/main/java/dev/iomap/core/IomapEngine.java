package dev.iomap.core;

import com.google.common.collect.ImmutableSortedMap;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.PageCacheOptions;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.Map;
import java.util.SortedMap;

/**
 * The engine as one object: the page-cache options in force and the adapters found by the plugins.
 * Obtain it from {@link Bootstrap#start}. Immutable and thread-safe.
 */
@Singleton
public final class IomapEngine {
    private final PageCacheOptions options;
    private final SortedMap<String, FileSystemAdapter> adapters;

    /**
     * @param options the options every new cache uses
     * @param adapters the adapters the plugins declared, bound by name by {@code AdapterModule}
     */
    @Inject
    public IomapEngine(PageCacheOptions options, Map<String, FileSystemAdapter> adapters) {
        this.options = options;
        this.adapters = ImmutableSortedMap.copyOf(adapters);
    }

    /** @return the options */
    public PageCacheOptions options() {
        return options;
    }

    /** @return every adapter by name, sorted */
    public SortedMap<String, FileSystemAdapter> adapters() {
        return adapters;
    }

    /**
     * @param name an adapter name
     * @return the adapter
     * @throws NotSupportedException naming the adapters there are, if none has that name
     */
    public FileSystemAdapter adapter(String name) throws NotSupportedException {
        FileSystemAdapter adapter = adapters.get(name);
        if (adapter == null) {
            throw new NotSupportedException("no adapter named '" + name + "'; available: " + adapters.keySet());
        }
        return adapter;
    }

    /**
     * A new page cache over a device, with this engine's options and its flusher running.
     *
     * @param device the device
     * @return the cache
     */
    public IomapCache newCache(BlockDevice device) {
        IomapCache cache = new IomapCache(options, device);
        cache.startBackgroundWriteback();
        return cache;
    }
}
