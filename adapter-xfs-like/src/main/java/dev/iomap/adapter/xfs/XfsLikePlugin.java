package dev.iomap.adapter.xfs;

import com.google.inject.AbstractModule;
import com.google.inject.Module;
import com.google.inject.multibindings.MapBinder;
import dev.iomap.api.AdapterPlugin;
import dev.iomap.api.FilesystemAdapter;

/**
 * Contributes {@link XfsLikeAdapter} to the adapter map under {@value XfsLikeAdapter#NAME}. Listed in
 * {@code META-INF/services/dev.iomap.api.AdapterPlugin}.
 */
public final class XfsLikePlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public XfsLikePlugin() {
    }

    @Override
    public Module module() {
        return new AbstractModule() {
            @Override
            protected void configure() {
                MapBinder.newMapBinder(binder(), String.class, FilesystemAdapter.class)
                        .addBinding(XfsLikeAdapter.NAME).to(XfsLikeAdapter.class);
            }
        };
    }
}
