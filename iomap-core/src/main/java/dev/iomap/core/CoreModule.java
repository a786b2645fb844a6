package dev.iomap.core;

import com.google.inject.AbstractModule;
import com.google.inject.multibindings.MapBinder;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.api.PageCacheOptions;
import java.util.Objects;

/**
 * The core's Guice bindings. Public bindings: {@link PageCacheOptions} (the instance given here),
 * {@link IomapEngine} (singleton) and the adapter {@code MapBinder<String, FileSystemAdapter>}
 * (declared here, so it exists even when no plugin declares an adapter; {@code AdapterModule}
 * fills it). Side-effect free.
 */
public final class CoreModule extends AbstractModule {
    private final PageCacheOptions options;

    /** @param options the options the engine uses */
    public CoreModule(PageCacheOptions options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    @Override
    protected void configure() {
        bind(PageCacheOptions.class).toInstance(options);
        bind(IomapEngine.class);
        MapBinder.newMapBinder(binder(), String.class, FileSystemAdapter.class);
    }
}
