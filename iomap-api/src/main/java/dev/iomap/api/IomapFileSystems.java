package dev.iomap.api;

import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.util.ServiceLoader;

/**
 * Formats and mounts filesystems by adapter name. The engine behind it is found with
 * {@link ServiceLoader} ({@link FileSystemRuntime}, provided by {@code iomap-core}), so applications
 * compile against this module alone.
 *
 * <pre>{@code
 * IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(4096));
 * try (IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, MountOptions.defaults());
 *         IomapFile file = fs.create("/hello")) {
 *     file.write(0, ByteBuffer.wrap("hello".getBytes(UTF_8)));
 *     file.fsync();
 * }
 * }</pre>
 */
public final class IomapFileSystems {

    private IomapFileSystems() {
    }

    /**
     * Formats a device with an adapter's empty filesystem.
     *
     * @param adapter the adapter's name
     * @param device the device
     * @param options block size, label, adapter properties
     * @throws NotSupportedException if no adapter has that name
     * @throws IOException as {@link dev.iomap.spi.FileSystemAdapter#format}
     */
    public static void format(String adapter, BlockDevice device, FormatOptions options) throws IOException {
        runtime().format(adapter, device, options);
    }

    /**
     * Mounts a formatted device.
     *
     * @param adapter the adapter's name
     * @param device the device
     * @param options page-cache options and whether the flusher runs
     * @return the mounted filesystem
     * @throws NotSupportedException if no adapter has that name
     * @throws IOException as {@link dev.iomap.spi.FileSystemAdapter#mount}
     */
    public static IomapFileSystem mount(String adapter, BlockDevice device, MountOptions options)
            throws IOException {
        return runtime().mount(adapter, device, options);
    }

    /**
     * Checks an unmounted image.
     *
     * @param adapter the adapter's name
     * @param device the device
     * @return the report
     * @throws IOException as {@link dev.iomap.spi.FileSystemAdapter#fsck}
     */
    public static FsckReport fsck(String adapter, BlockDevice device) throws IOException {
        return runtime().fsck(adapter, device, FsckOptions.METADATA);
    }

    /**
     * Checks an unmounted image, with options (a scrub reads and verifies every data extent).
     *
     * @param adapter the adapter's name
     * @param device the device
     * @param options what to check beyond the metadata
     * @return the report
     * @throws NotSupportedException if no adapter has that name, or for a scrub of an adapter without
     *     {@link Capability#DATA_CHECKSUMS}
     * @throws IOException as {@link dev.iomap.spi.FileSystemAdapter#fsck(BlockDevice, FsckOptions)}
     */
    public static FsckReport fsck(String adapter, BlockDevice device, FsckOptions options) throws IOException {
        return runtime().fsck(adapter, device, options);
    }

    /**
     * Whether an unmounted image must have its journal replayed onto the device before it can be mounted as
     * it was left (it was not unmounted cleanly): a mount on a write-protected device refuses such an image
     * unless told {@code norecovery}, as XFS and ext4 do. Reads, never writes.
     *
     * @param adapter the adapter's name
     * @param device the device
     * @return what {@link dev.iomap.spi.FileSystemAdapter#needsRecovery} says
     * @throws IOException as that method
     */
    public static boolean needsRecovery(String adapter, BlockDevice device) throws IOException {
        return runtime().needsRecovery(adapter, device);
    }

    /**
     * @return the names of the adapters on the class path
     */
    public static java.util.SortedSet<String> adapters() {
        return runtime().adapters();
    }

    private static FileSystemRuntime runtime() {
        FileSystemRuntime runtime = RuntimeHolder.RUNTIME;
        if (runtime == null) {
            throw new IllegalStateException("no iomap4j runtime on the class path: add iomap-core");
        }
        return runtime;
    }

    /**
     * The runtime, looked up once per class loader of this class (the holder is initialised on first
     * use), so the plugins are discovered and the engine is built once, not per call.
     */
    private static final class RuntimeHolder {
        static final FileSystemRuntime RUNTIME = ServiceLoader
                .load(FileSystemRuntime.class, IomapFileSystems.class.getClassLoader())
                .findFirst().orElse(null);
    }

    /** The engine behind {@link IomapFileSystems}; implemented by {@code iomap-core}. */
    public interface FileSystemRuntime {

        /**
         * @param adapter adapter name
         * @param device the device
         * @param options format options
         * @throws IOException as {@link IomapFileSystems#format}
         */
        void format(String adapter, BlockDevice device, FormatOptions options) throws IOException;

        /**
         * @param adapter adapter name
         * @param device the device
         * @param options mount options
         * @return the mounted filesystem
         * @throws IOException as {@link IomapFileSystems#mount}
         */
        IomapFileSystem mount(String adapter, BlockDevice device, MountOptions options) throws IOException;

        /**
         * @param adapter adapter name
         * @param device the device
         * @param options what to check beyond the metadata
         * @return the report
         * @throws IOException as {@link IomapFileSystems#fsck(String, BlockDevice, FsckOptions)}
         */
        FsckReport fsck(String adapter, BlockDevice device, FsckOptions options) throws IOException;

        /**
         * @param adapter adapter name
         * @param device the device
         * @return whether the image needs recovery
         * @throws IOException as {@link IomapFileSystems#needsRecovery}
         */
        boolean needsRecovery(String adapter, BlockDevice device) throws IOException;

        /** @return adapter names */
        java.util.SortedSet<String> adapters();
    }
}
