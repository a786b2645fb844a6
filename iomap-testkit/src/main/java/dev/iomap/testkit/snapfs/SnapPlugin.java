package dev.iomap.testkit.snapfs;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import java.util.List;

/**
 * Registers {@link SnapAdapter} ({@value SnapAdapter#NAME}, every capability in
 * {@link SnapAdapter#SUPPORTED}) with every engine started on the class path. The test kit's jar
 * does not list it: a module whose tests find snapfs by name lists this class in its test-scope
 * {@code src/test/resources/META-INF/services/dev.iomap.spi.AdapterPlugin}, so neither adapter
 * authors' tests nor anything shipped gets a toy adapter it did not ask for.
 */
public final class SnapPlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public SnapPlugin() {
    }

    /** @return one new {@link SnapAdapter} with every capability it supports */
    @Override
    public List<FileSystemAdapter> adapters() {
        return List.of(new SnapAdapter());
    }
}
