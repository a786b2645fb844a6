package dev.iomap.adapter.bcachefs;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import java.util.List;

/**
 * Declares {@link BcachefsLikeAdapter} under {@value BcachefsLikeAdapter#NAME}. Listed in
 * {@code META-INF/services/dev.iomap.spi.AdapterPlugin}.
 */
public final class BcachefsLikePlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public BcachefsLikePlugin() {
    }

    @Override
    public List<FileSystemAdapter> adapters() {
        return List.of(new BcachefsLikeAdapter());
    }
}
