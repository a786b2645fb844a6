package dev.iomap.cli;

import dev.iomap.api.Capability;
import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.util.List;

/**
 * Registers snapfs ({@value SnapAdapter#NAME}) with every engine the CLI tests start, declaring every
 * capability but DURABLE_FSYNC: its fsync then commits no metadata, so a bench job's device traffic
 * is exactly the data written back and write amplification is exact. mkfs, fsck and stat work on
 * its images as on any snapfs image. Listed in
 * {@code src/test/resources/META-INF/services/dev.iomap.spi.AdapterPlugin}.
 */
public final class SnapfsWithoutDurableFsyncPlugin implements AdapterPlugin {

    /** Found by {@link java.util.ServiceLoader}. */
    public SnapfsWithoutDurableFsyncPlugin() {
    }

    /** @return snapfs without DURABLE_FSYNC */
    @Override
    public List<FileSystemAdapter> adapters() {
        return List.of(SnapAdapter.without(Capability.DURABLE_FSYNC));
    }
}
