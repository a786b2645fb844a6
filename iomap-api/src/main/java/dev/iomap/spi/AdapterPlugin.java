package dev.iomap.spi;

import java.util.List;

/**
 * The entry point of an adapter jar, found with {@link java.util.ServiceLoader} (list the class in
 * {@code META-INF/services/dev.iomap.spi.AdapterPlugin}; {@code IomapFileSystems} looks for plugins
 * once per class loader).
 *
 * <p>A plugin only declares its adapters; the core binds each into its adapter map under
 * {@link FileSystemAdapter#name()} and refuses a name that is blank or taken by another adapter.
 * Implementations need a public no-argument constructor, and {@link #adapters()} must be fast and
 * free of side effects (no I/O): it runs when the runtime starts.
 */
public interface AdapterPlugin {

    /** @return the adapters this plugin contributes, each with a distinct name */
    List<FileSystemAdapter> adapters();
}
