package dev.iomap.nio.testadapter;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FilesystemAdapter;
import java.util.List;

/**
 * Declares {@link ImageTestAdapter} ({@value ImageTestAdapter#NAME}) to the tests of this module
 * and of the modules that use its test jar; listed in
 * {@code src/test/resources/META-INF/services/dev.iomap.spi.AdapterPlugin}.
 */
public final class ImageTestAdapterPlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public ImageTestAdapterPlugin() {
    }

    @Override
    public List<FilesystemAdapter> adapters() {
        return List.of(new ImageTestAdapter());
    }
}
