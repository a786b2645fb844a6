package dev.iomap.api;

import com.google.inject.Module;

/**
 * The entry point of an adapter jar, found with {@link java.util.ServiceLoader} (list the class in
 * {@code META-INF/services/dev.iomap.api.AdapterPlugin}).
 *
 * <p>The module must be fast and side-effect free (no I/O in {@code configure()}) and contribute its
 * adapter with {@code MapBinder.newMapBinder(binder(), String.class, FilesystemAdapter.class)
 * .addBinding(name).to(...)}. Implementations need a public no-argument constructor.
 */
public interface AdapterPlugin {

    /** @return the Guice module contributing this plugin's adapters */
    Module module();
}
