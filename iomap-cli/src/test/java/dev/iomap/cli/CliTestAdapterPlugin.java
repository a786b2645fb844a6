package dev.iomap.cli;

import com.google.inject.AbstractModule;
import com.google.inject.Module;
import com.google.inject.multibindings.MapBinder;
import dev.iomap.api.AdapterPlugin;
import dev.iomap.api.FilesystemAdapter;

/**
 * Contributes {@link CliTestAdapter} to every engine the CLI tests start; listed in
 * {@code src/test/resources/META-INF/services/dev.iomap.api.AdapterPlugin}.
 */
public final class CliTestAdapterPlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public CliTestAdapterPlugin() {
    }

    @Override
    public Module module() {
        return new AbstractModule() {
            @Override
            protected void configure() {
                MapBinder.newMapBinder(binder(), String.class, FilesystemAdapter.class)
                        .addBinding(CliTestAdapter.NAME).toInstance(new CliTestAdapter());
            }
        };
    }
}
