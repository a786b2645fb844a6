package dev.iomap.core;

import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import java.util.List;

/**
 * A plugin for the core's tests, listed in
 * {@code src/test/resources/META-INF/services/dev.iomap.spi.AdapterPlugin}, so every
 * {@link Bootstrap#start} in these tests finds one adapter, {@value #NAME}.
 */
public final class TestAdapterPlugin implements AdapterPlugin {
    /** The adapter's name. */
    public static final String NAME = "test-adapter";
    /** The adapter's description. */
    public static final String DESCRIPTION = "an adapter that maps nothing, for the core's tests";

    /** Found by {@link java.util.ServiceLoader}. */
    public TestAdapterPlugin() {
    }

    /** How many times any instance was asked for its adapters: once per runtime start. */
    public static final java.util.concurrent.atomic.AtomicInteger DECLARED = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public List<FileSystemAdapter> adapters() {
        DECLARED.incrementAndGet();
        return List.of(new TestAdapter(NAME, DESCRIPTION));
    }

    /**
     * A filesystem adapter that only has a name: it formats and mounts nothing.
     *
     * @param name its name
     * @param description what it models
     */
    public record TestAdapter(String name, String description) implements FileSystemAdapter {

        @Override
        public java.util.Set<dev.iomap.api.Capability> capabilities() {
            return java.util.Set.of();
        }

        @Override
        public void format(dev.iomap.device.BlockDevice device, dev.iomap.api.FormatOptions options)
                throws dev.iomap.api.NotSupportedException {
            throw new dev.iomap.api.NotSupportedException(name + " formats nothing");
        }

        @Override
        public dev.iomap.spi.MountedFileSystem mount(dev.iomap.device.BlockDevice device,
                dev.iomap.api.MountOptions options) throws dev.iomap.api.NotSupportedException {
            throw new dev.iomap.api.NotSupportedException(name + " mounts nothing");
        }

        @Override
        public dev.iomap.api.FsckReport fsck(dev.iomap.device.BlockDevice device) {
            return new dev.iomap.api.FsckReport(java.util.List.of(), "nothing");
        }
    }
}
