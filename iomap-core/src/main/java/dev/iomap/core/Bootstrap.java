package dev.iomap.core;

import com.google.inject.Guice;
import com.google.inject.Module;
import dev.iomap.spi.AdapterPlugin;
import dev.iomap.api.PageCacheOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The one place that builds the Guice injector: the core module plus an {@code AdapterModule} that
 * binds the adapters every plugin declares.
 */
public final class Bootstrap {

    private Bootstrap() {
    }

    /**
     * Starts an engine with the adapters of every {@link AdapterPlugin} that {@link ServiceLoader}
     * finds through the class loader that loaded the core.
     *
     * @param options the page-cache options
     * @return the engine
     * @throws com.google.inject.CreationException if an adapter's name is blank or taken twice
     */
    public static IomapEngine start(PageCacheOptions options) {
        return start(options, List.of());
    }

    /**
     * Starts an engine with the discovered plugins and extra plugins not listed for
     * {@link ServiceLoader} (an adapter embedded in an application, a test's own).
     *
     * @param options the page-cache options
     * @param extra more plugins
     * @return the engine
     * @throws com.google.inject.CreationException if an adapter's name is blank or taken twice
     */
    public static IomapEngine start(PageCacheOptions options, List<AdapterPlugin> extra) {
        List<AdapterPlugin> plugins = discoverPlugins();
        plugins.addAll(extra);
        return Guice.createInjector(modules(options, plugins)).getInstance(IomapEngine.class);
    }

    /**
     * The modules {@link #start} installs for the discovered plugins: the core module and the adapter
     * map. Tests use {@code Modules.override} on the result to replace bindings.
     *
     * @param options the page-cache options
     * @return a mutable list
     */
    public static List<Module> modules(PageCacheOptions options) {
        return modules(options, discoverPlugins());
    }

    private static List<Module> modules(PageCacheOptions options, List<AdapterPlugin> plugins) {
        List<Module> modules = new ArrayList<>();
        modules.add(new CoreModule(options));
        modules.add(new AdapterModule(plugins));
        return modules;
    }

    /** @return every plugin listed for {@link ServiceLoader} through the core's class loader */
    public static List<AdapterPlugin> discoverPlugins() {
        List<AdapterPlugin> plugins = new ArrayList<>();
        ServiceLoader.load(AdapterPlugin.class, Bootstrap.class.getClassLoader()).forEach(plugins::add);
        return plugins;
    }
}
