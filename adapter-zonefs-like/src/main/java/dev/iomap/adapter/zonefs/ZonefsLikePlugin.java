package dev.iomap.adapter.zonefs;

import com.google.inject.AbstractModule;
import com.google.inject.Module;
import com.google.inject.multibindings.MapBinder;
import dev.iomap.api.AdapterPlugin;
import dev.iomap.api.FilesystemAdapter;

/**
 * Contributes {@link ZonefsLikeAdapter} to the adapter map under {@value ZonefsLikeAdapter#NAME}.
 * Listed in {@code META-INF/services/dev.iomap.api.AdapterPlugin}.
 */
public final class ZonefsLikePlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public ZonefsLikePlugin() {
    }

    @Override
    public Module module() {
        return new AbstractModule() {
            @Override
            protected void configure() {
                MapBinder.newMapBinder(binder(), String.class, FilesystemAdapter.class)
                        .addBinding(ZonefsLikeAdapter.NAME).to(ZonefsLikeAdapter.class);
            }
        };
    }
}
