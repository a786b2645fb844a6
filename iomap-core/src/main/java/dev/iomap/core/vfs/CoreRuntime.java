package dev.iomap.core.vfs;

import dev.iomap.device.BlockDevice;
import dev.iomap.spi.AdapterMounts;
import dev.iomap.spi.FilesystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.spi.MountedFilesystem;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.Bootstrap;
import dev.iomap.core.IomapEngine;
import java.io.IOException;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The {@link IomapFileSystems.FileSystemRuntime} and the {@link AdapterMounts} of {@code iomap-core},
 * listed for {@link java.util.ServiceLoader}. {@link IomapFileSystems} looks it up once per class loader and keeps
 * that one instance; it builds its {@link IomapEngine} on first use ({@link Bootstrap#start}), which
 * binds the adapters declared by every {@link dev.iomap.spi.AdapterPlugin} visible to the core's class
 * loader, so plugins are discovered once, not per call. Each mount gets a cache of its own with the
 * mount's {@link MountOptions#pageCache() page-cache options}. Thread-safe.
 */
public final class CoreRuntime implements IomapFileSystems.FileSystemRuntime, AdapterMounts {
    private volatile IomapEngine engine;

    /** For {@link java.util.ServiceLoader}. */
    public CoreRuntime() {
    }

    private IomapEngine engine() {
        IomapEngine current = engine;
        if (current == null) {
            synchronized (this) {
                if (engine == null) {
                    engine = Bootstrap.start(PageCacheOptions.defaults());
                }
                current = engine;
            }
        }
        return current;
    }

    private FilesystemAdapter adapter(String name) throws IOException {
        return engine().adapter(name);
    }

    @Override
    public void format(String adapter, BlockDevice device, FormatOptions options) throws IOException {
        adapter(adapter).format(device, options);
    }

    @Override
    public IomapFileSystem mount(String adapter, BlockDevice device, MountOptions options) throws IOException {
        FilesystemAdapter fsAdapter = adapter(adapter);
        MountedFilesystem mount = fsAdapter.mount(device, options);
        return new CoreFileSystem(fsAdapter, mount, device, options);
    }

    /**
     * Mounts with an adapter instance that is not a plugin (tests, embedded use).
     *
     * @param adapter the adapter
     * @param device the device
     * @param options mount options
     * @return the mounted filesystem
     * @throws IOException as {@link FilesystemAdapter#mount}
     */
    public static IomapFileSystem mount(FilesystemAdapter adapter, BlockDevice device, MountOptions options)
            throws IOException {
        return new CoreFileSystem(adapter, adapter.mount(device, options), device, options);
    }

    @Override
    public IomapFileSystem mountInstance(FilesystemAdapter adapter, BlockDevice device, MountOptions options)
            throws IOException {
        return mount(adapter, device, options);
    }

    @Override
    public FsckReport fsck(String adapter, BlockDevice device, FsckOptions options) throws IOException {
        return adapter(adapter).fsck(device, options);
    }

    @Override
    public SortedSet<String> adapters() {
        return new TreeSet<>(engine().adapters().keySet());
    }
}
