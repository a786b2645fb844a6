package dev.iomap.examples.ext2;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import java.util.List;

/** Registers {@link Ext2Adapter} under {@value Ext2Adapter#NAME} (listed in {@code META-INF/services}). */
public final class Ext2Plugin implements AdapterPlugin {
    /** @return the ext2-like adapter */
    @Override
    public List<FileSystemAdapter> adapters() {
        return List.of(new Ext2Adapter());
    }
}
