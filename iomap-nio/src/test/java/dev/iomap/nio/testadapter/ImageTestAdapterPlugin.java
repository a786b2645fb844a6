package dev.iomap.nio.testadapter;

import dev.iomap.api.AdapterPlugin;
import dev.iomap.api.FilesystemAdapter;
import java.util.List;

/**
 * Declares {@link ImageTestAdapter} ({@value ImageTestAdapter#NAME}) to the tests of this module
 * and of the modules that use its test jar; listed in
 * {@code src/test/resources/META-INF/services/dev.iomap.api.AdapterPlugin}.
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
