package dev.iomap.adapter.zonefs;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import java.util.List;

/**
 * Declares {@link ZonefsLikeAdapter} under {@value ZonefsLikeAdapter#NAME}.
 * Listed in {@code META-INF/services/dev.iomap.spi.AdapterPlugin}.
 */
public final class ZonefsLikePlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public ZonefsLikePlugin() {
    }

    @Override
    public List<FileSystemAdapter> adapters() {
        return List.of(new ZonefsLikeAdapter());
    }
}
