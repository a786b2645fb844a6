package dev.iomap.core;

import com.google.inject.AbstractModule;
import com.google.inject.multibindings.MapBinder;
import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Binds the adapters that plugins declare into the {@code MapBinder<String, FileSystemAdapter>}, each
 * under its own {@link FileSystemAdapter#name()}: plugins declare, the core binds. A blank name, or a
 * name two adapters share, is a configuration error naming both plugins. Side-effect free (the
 * plugins were asked for their adapters when this module was configured, nothing more).
 */
final class AdapterModule extends AbstractModule {
    private final List<AdapterPlugin> plugins;

    AdapterModule(List<AdapterPlugin> plugins) {
        this.plugins = List.copyOf(plugins);
    }

    @Override
    protected void configure() {
        MapBinder<String, FileSystemAdapter> binder =
                MapBinder.newMapBinder(binder(), String.class, FileSystemAdapter.class);
        Map<String, AdapterPlugin> owners = new HashMap<>();
        for (AdapterPlugin plugin : plugins) {
            for (FileSystemAdapter adapter : plugin.adapters()) {
                String name = adapter.name();
                if (name == null || name.isBlank()) {
                    addError("plugin %s declares an adapter (%s) with a blank name",
                            plugin.getClass().getName(), adapter.getClass().getName());
                    continue;
                }
                AdapterPlugin owner = owners.putIfAbsent(name, plugin);
                if (owner != null) {
                    addError("two adapters are named '%s': one from %s, one from %s", name,
                            owner.getClass().getName(), plugin.getClass().getName());
                    continue;
                }
                binder.addBinding(name).toInstance(adapter);
            }
        }
    }
}
