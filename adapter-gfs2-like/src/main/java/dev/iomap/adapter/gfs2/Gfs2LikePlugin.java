package dev.iomap.adapter.gfs2;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import java.util.List;

/**
 * Declares {@link Gfs2LikeAdapter} under {@value Gfs2LikeAdapter#NAME}. Listed in
 * {@code META-INF/services/dev.iomap.spi.AdapterPlugin}.
 */
public final class Gfs2LikePlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public Gfs2LikePlugin() {
    }

    @Override
    public List<FileSystemAdapter> adapters() {
        return List.of(new Gfs2LikeAdapter());
    }
}
