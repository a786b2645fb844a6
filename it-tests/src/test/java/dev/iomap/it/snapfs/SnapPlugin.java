package dev.iomap.it.snapfs;

import com.google.inject.AbstractModule;
import com.google.inject.Module;
import com.google.inject.multibindings.MapBinder;
import dev.iomap.api.AdapterPlugin;
import dev.iomap.api.FilesystemAdapter;

/** Registers snapfs with the engine (listed in {@code META-INF/services/dev.iomap.api.AdapterPlugin}). */
public final class SnapPlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public SnapPlugin() {
    }

    @Override
    public Module module() {
        return new AbstractModule() {
            @Override
            protected void configure() {
                MapBinder.newMapBinder(binder(), String.class, FilesystemAdapter.class)
                        .addBinding(SnapAdapter.NAME).to(SnapAdapter.class);
            }
        };
    }
}
