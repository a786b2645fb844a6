package dev.iomap.testkit.snapfs;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FilesystemAdapter;
import java.util.List;

/** Registers snapfs with the engine (listed in {@code META-INF/services/dev.iomap.spi.AdapterPlugin}). */
public final class SnapPlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public SnapPlugin() {
    }

    @Override
    public List<FilesystemAdapter> adapters() {
        return List.of(new SnapAdapter());
    }
}
