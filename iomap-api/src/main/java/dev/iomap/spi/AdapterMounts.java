package dev.iomap.spi;

import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.util.Objects;
import java.util.ServiceLoader;

/**
 * Mounts an adapter <em>instance</em> through the engine, for an adapter that is not (or not only) a
 * registered {@link AdapterPlugin}: one built with constructor arguments (a cluster node's lock
 * manager, a test's planted bug), or the very instance a test kit was given. {@code iomap-core}
 * provides the engine through {@link ServiceLoader} ({@code META-INF/services/dev.iomap.spi.AdapterMounts});
 * {@link #mount(FileSystemAdapter, BlockDevice, MountOptions)} is the static way in.
 *
 * <p>{@link dev.iomap.api.IomapFileSystems#mount} mounts by name, with the instance the plugin
 * declared; this mounts exactly the instance passed, so the adapter's {@code mount} is called on it.
 */
public interface AdapterMounts {

    /**
     * Mounts {@code device} with {@code adapter} and wraps the result in the engine's file API.
     *
     * @param adapter the adapter instance whose {@link FileSystemAdapter#mount} is called
     * @param device a device holding {@code adapter}'s format
     * @param options mount options
     * @return the mounted filesystem; closing it unmounts
     * @throws IOException as {@link FileSystemAdapter#mount}
     */
    IomapFileSystem mountInstance(FileSystemAdapter adapter, BlockDevice device, MountOptions options)
            throws IOException;

    /**
     * Mounts with the engine found on the class path of this interface's class loader.
     *
     * @param adapter the adapter instance
     * @param device a device holding {@code adapter}'s format
     * @param options mount options
     * @return the mounted filesystem
     * @throws IOException as {@link FileSystemAdapter#mount}
     * @throws IllegalStateException if no engine (such as {@code iomap-core}) is on the class path
     */
    static IomapFileSystem mount(FileSystemAdapter adapter, BlockDevice device, MountOptions options)
            throws IOException {
        Objects.requireNonNull(adapter, "adapter");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(options, "options");
        AdapterMounts engine = AdapterMountsHolder.ENGINE;
        if (engine == null) {
            throw new IllegalStateException("no iomap engine on the class path: add iomap-core to mount "
                    + adapter.name());
        }
        return engine.mountInstance(adapter, device, options);
    }
}
