package dev.iomap.adapter.xfs;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import java.util.List;

/**
 * Declares {@link XfsLikeAdapter} under {@value XfsLikeAdapter#NAME}. Listed in
 * {@code META-INF/services/dev.iomap.spi.AdapterPlugin}.
 */
public final class XfsLikePlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public XfsLikePlugin() {
    }

    @Override
    public List<FileSystemAdapter> adapters() {
        return List.of(new XfsLikeAdapter());
    }
}
