package dev.iomap.adapter.zonefs;

import dev.iomap.api.AdapterPlugin;
import dev.iomap.api.FilesystemAdapter;
import java.util.List;

/**
 * Declares {@link ZonefsLikeAdapter} under {@value ZonefsLikeAdapter#NAME}.
 * Listed in {@code META-INF/services/dev.iomap.api.AdapterPlugin}.
 */
public final class ZonefsLikePlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public ZonefsLikePlugin() {
    }

    @Override
    public List<FilesystemAdapter> adapters() {
        return List.of(new ZonefsLikeAdapter());
    }
}
