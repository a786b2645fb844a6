package dev.iomap.nio.testadapter;

import com.google.inject.AbstractModule;
import com.google.inject.Module;
import com.google.inject.multibindings.MapBinder;
import dev.iomap.api.AdapterPlugin;
import dev.iomap.api.FilesystemAdapter;

/**
 * Contributes {@link ImageTestAdapter} ({@value ImageTestAdapter#NAME}) to the tests of this module
 * and of the modules that use its test jar; listed in
 * {@code src/test/resources/META-INF/services/dev.iomap.api.AdapterPlugin}.
 */
public final class ImageTestAdapterPlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public ImageTestAdapterPlugin() {
    }

    @Override
    public Module module() {
        return new AbstractModule() {
            @Override
            protected void configure() {
                MapBinder.newMapBinder(binder(), String.class, FilesystemAdapter.class)
                        .addBinding(ImageTestAdapter.NAME).toInstance(new ImageTestAdapter());
            }
        };
    }
}
