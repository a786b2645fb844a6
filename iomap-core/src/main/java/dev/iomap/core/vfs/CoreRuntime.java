package dev.iomap.core.vfs;

import dev.iomap.device.BlockDevice;
import dev.iomap.spi.AdapterMounts;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.ClusterSpec;
import dev.iomap.spi.lock.ClusterConnection;
import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.ClusterJoin;
import dev.iomap.spi.lock.ClusterJoinProvider;
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

    private FileSystemAdapter adapter(String name) throws IOException {
        return engine().adapter(name);
    }

    @Override
    public void format(String adapter, BlockDevice device, FormatOptions options) throws IOException {
        adapter(adapter).format(device, options);
    }

    @Override
    public IomapFileSystem mount(String adapter, BlockDevice device, MountOptions options) throws IOException {
        return mount(adapter(adapter), device, options);
    }

    /**
     * Mounts with an adapter instance that is not a plugin (tests, embedded use). With
     * {@link MountOptions#cluster()} set, the mount is a cluster node: the adapter's
     * {@link FileSystemAdapter#clusterNode} (refused first, before any connection, by an adapter without
     * one) is mounted, joining through a connection of the scheme's {@link ClusterJoinProvider}; the
     * connection is closed after the unmount, or at once if the mount fails. The adapter and the cache
     * get the device through the mount's {@link ShutdownGate}, which stops every write after a forced
     * shutdown.
     *
     * @param adapter the adapter
     * @param device the device
     * @param options mount options
     * @return the mounted filesystem
     * @throws dev.iomap.api.NotSupportedException for a cluster mount with an adapter without a cluster
     *     mode, or a scheme no provider serves
     * @throws IOException as {@link FileSystemAdapter#mount}, or if the cluster cannot be reached
     */
    public static IomapFileSystem mount(FileSystemAdapter adapter, BlockDevice device, MountOptions options)
            throws IOException {
        ShutdownGate gate = new ShutdownGate(device);
        if (options.cluster().isEmpty()) {
            return new CoreFileSystem(adapter, adapter.mount(gate, options), gate, options);
        }
        ClusterSpec spec = options.cluster().get();
        ConnectingJoin join = new ConnectingJoin(spec);
        FileSystemAdapter node = adapter.clusterNode(join);
        ClusterJoinProvider.forScheme(spec.scheme());   // an unknown scheme is refused before the adapter reads
        try {
            return new CoreFileSystem(node, node.mount(gate, options), gate, options, join);
        } catch (IOException | RuntimeException | Error e) {
            try {
                join.close();
            } catch (IOException | RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /**
     * A {@link ClusterJoin} that connects when the adapter joins (so that an adapter without a cluster
     * mode is refused before anything is connected), and closes that connection when closed.
     */
    private static final class ConnectingJoin implements ClusterJoin, java.io.Closeable {
        private final ClusterSpec spec;
        private ClusterConnection connection;

        ConnectingJoin(ClusterSpec spec) {
            this.spec = spec;
        }

        @Override
        public synchronized ClusterContext join(String filesystemId, int journals, JournalReplay recovery)
                throws IOException {
            if (connection != null) {
                throw new IllegalStateException("a cluster connection serves one mount: " + spec);
            }
            connection = ClusterJoinProvider.forScheme(spec.scheme()).connect(spec);
            return connection.join().join(filesystemId, journals, recovery);
        }

        @Override
        public synchronized void close() throws IOException {
            if (connection != null) {
                connection.close();
            }
        }
    }

    @Override
    public IomapFileSystem mountInstance(FileSystemAdapter adapter, BlockDevice device, MountOptions options)
            throws IOException {
        return mount(adapter, device, options);
    }

    @Override
    public FsckReport fsck(String adapter, BlockDevice device, FsckOptions options) throws IOException {
        return adapter(adapter).fsck(device, options);
    }

    @Override
    public boolean needsRecovery(String adapter, BlockDevice device) throws IOException {
        return adapter(adapter).needsRecovery(device);
    }

    @Override
    public SortedSet<String> adapters() {
        return new TreeSet<>(engine().adapters().keySet());
    }
}
