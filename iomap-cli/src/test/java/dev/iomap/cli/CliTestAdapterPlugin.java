package dev.iomap.cli;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FilesystemAdapter;
import java.util.List;

/**
 * Declares {@link CliTestAdapter} to every engine the CLI tests start; listed in
 * {@code src/test/resources/META-INF/services/dev.iomap.spi.AdapterPlugin}.
 */
public final class CliTestAdapterPlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public CliTestAdapterPlugin() {
    }

    @Override
    public List<FilesystemAdapter> adapters() {
        return List.of(new CliTestAdapter());
    }
}
