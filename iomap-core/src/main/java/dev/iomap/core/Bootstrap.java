package dev.iomap.core;

import com.google.inject.Guice;
import com.google.inject.Module;
import dev.iomap.api.AdapterPlugin;
import dev.iomap.api.PageCacheOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** The one place that builds the Guice injector: core module plus every plugin on the class path. */
public final class Bootstrap {

    private Bootstrap() {
    }

    /**
     * Starts an engine with the adapters of every {@link AdapterPlugin} that {@link ServiceLoader}
     * finds on the class path.
     *
     * @param options the page-cache options
     * @return the engine
     * @throws com.google.inject.CreationException if two plugins bind the same adapter name
     */
    public static IomapEngine start(PageCacheOptions options) {
        return start(options, List.of());
    }

    /**
     * Starts an engine with the discovered plugins and extra modules (tests use {@code Modules.override}
     * on the result of {@link #modules} instead when they replace bindings).
     *
     * @param options the page-cache options
     * @param extra more modules, e.g. an adapter not packaged as a plugin
     * @return the engine
     */
    public static IomapEngine start(PageCacheOptions options, List<Module> extra) {
        List<Module> modules = modules(options);
        modules.addAll(extra);
        return Guice.createInjector(modules).getInstance(IomapEngine.class);
    }

    /**
     * The modules {@link #start} installs: the core module and one per discovered plugin.
     *
     * @param options the page-cache options
     * @return a mutable list
     */
    public static List<Module> modules(PageCacheOptions options) {
        List<Module> modules = new ArrayList<>();
        modules.add(new CoreModule(options));
        for (AdapterPlugin plugin : ServiceLoader.load(AdapterPlugin.class)) {
            modules.add(plugin.module());
        }
        return modules;
    }
}
