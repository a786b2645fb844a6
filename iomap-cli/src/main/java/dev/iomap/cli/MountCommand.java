package dev.iomap.cli;

import dev.iomap.cluster.ZkClusterJoinProvider;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.ClusterSpec;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.fuse.FuseMountOptions;
import dev.iomap.fuse.IomapMount;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code iomap mount}: mounts an image on a directory with FUSE and stays in the foreground until
 * Ctrl-C or {@code fusermount3 -u}; either unmounts, writes everything back and leaves the image clean.
 *
 * <p>With {@code --cluster zk=HOST:PORT[,HOST:PORT]} the mount is one node of several sharing the image
 * (gfs2-like only; {@link MountOptions#cluster()}): the image is opened for writing shared with the other
 * nodes only ({@code FileBlockDevice.openShared}) and with direct I/O, so that no node reads from the
 * host's page cache what another node has since overwritten; the node id is {@code --node-id} or a new
 * one (host name and a random suffix), printed on stderr.
 */
@Command(name = "mount", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Mounts an image on a directory with FUSE and stays in the foreground.",
                "Ctrl-C, or fusermount3 -u MOUNTPOINT from another shell, unmounts and leaves the image clean.",
                "Needs fuse3 (libfuse3, /dev/fuse)."})
final class MountCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private ImageOptions image;

    @Parameters(index = "1", paramLabel = "MOUNTPOINT", description = "an existing directory")
    private Path mountPoint;

    @Option(names = "--page-size", paramLabel = "SIZE",
            description = "page size of the mount's cache (default: 4096, or the image's block size if larger)")
    private String pageSize;

    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "a page-cache option of the mount (repeatable)")
    private List<String> settings = new ArrayList<>();

    @Option(names = "--no-flusher", description = "mount without background writeback")
    private boolean noFlusher;

    @Option(names = "--kernel-cache", description = "let the kernel's page cache hold file data too, for writes"
            + " as well (default: off, every open that may write is direct I/O; read-only opens are cached, see"
            + " --no-read-cache)")
    private boolean kernelCache;

    @Option(names = "--no-read-cache", description = "make read-only opens direct I/O too, so that the data path"
            + " is iomap4j's cache alone (the default lets read-only opens of files with one name use the kernel's"
            + " page cache; cluster mounts never do)")
    private boolean noReadCache;

    @Option(names = "--writeback-cache", description = "with --kernel-cache (which it implies): the kernel's"
            + " writeback cache, so writes are gathered in the kernel's page cache and sent in large requests")
    private boolean writebackCache;

    @Option(names = "--read-ahead", paramLabel = "SIZE", description = "the kernel's readahead window for the"
            + " mount's cached opens, a multiple of 1k up to 1g, set in /sys/class/bdi (needs root; otherwise the"
            + " kernel's 128 KiB stays, with a warning for a window other than the default); 0 leaves the kernel's"
            + " own (default: 1m, the largest request the mount takes)")
    private String readAhead;

    @Option(names = {"-o", "--fuse-option"}, paramLabel = "OPTION",
            description = "a libfuse -o option, e.g. allow_other (repeatable)")
    private List<String> fuseOptions = new ArrayList<>();

    @Option(names = {"-O", "--fs-option"}, paramLabel = "KEY[=VALUE]",
            description = "an option of the adapter, e.g. -O data=journal (repeatable; also a comma list);"
                    + " an adapter refuses options it does not know")
    private List<String> fsOptions = new ArrayList<>();

    @Option(names = "--cluster", paramLabel = "zk=HOST:PORT[,HOST:PORT]",
            description = "mount as one node of several sharing the image, kept coherent by ZooKeeper at these"
                    + " addresses (gfs2-like; iomap zookeeper runs a server on this machine)")
    private String clusterOption;

    @Option(names = "--node-id", paramLabel = "ID",
            description = "with --cluster: this node's id, letters, digits, '-' and '_' (default: the host name"
                    + " and a random suffix)")
    private String nodeId;

    @Override
    public Integer call() throws Exception {
        ClusterSpec cluster = clusterSpec();
        Map<String, String> adapterOptions = FsOptions.parse(fsOptions);
        List<CacheSettings.Assignment> assignments = new ArrayList<>();
        for (String setting : settings) {
            assignments.add(CacheSettings.Assignment.parse(setting));
        }
        PageCacheOptions cache = CacheSettings.options(pageSize == null ? "4096" : pageSize, assignments);
        // A cluster node's image changes under it (other nodes write): nothing may stay in the kernel's cache.
        FuseMountOptions fuse = FuseMountOptions.defaults().withDirectIo(cluster != null || (!kernelCache && !writebackCache))
                .withReadCache(cluster == null && !noReadCache).withWritebackCache(cluster == null && writebackCache)
                .withSharedImage(cluster != null).withFuseOptions(fuseOptions);
        fuse = withReadAhead(fuse);
        BlockDevice device = cluster == null ? image.openExisting() : image.openShared();
        IomapFileSystem fs;
        try {
            cache = CacheSettings.fitting(cache, pageSize, assignments, device);
            MountOptions options = new MountOptions(cache, !noFlusher, adapterOptions);
            if (cluster != null) {
                options = options.withCluster(cluster);
                spec.commandLine().getErr().println("iomap: joining " + cluster.scheme() + "=" + cluster.address()
                        + " as node " + cluster.nodeId().orElseThrow());
                spec.commandLine().getErr().flush();
            }
            fs = IomapFileSystems.mount(image.adapter(), device, options);
        } catch (IOException | RuntimeException e) {
            device.close();
            throw e;
        }
        try {
            // Blocks until unmounted; from here the mount owns fs and device and closes both.
            return IomapMount.mountForeground(fs, device, mountPoint, fuse);
        } catch (IOException e) {
            // Mounting failed, so nothing was closed yet.
            try (device; fs) {
                throw e;
            }
        }
    }

    /**
     * @param fuse the mount's options so far
     * @return them with {@code --read-ahead}, if given
     * @throws UsageException if it does not parse, or the options refuse it (not 0 or a multiple of 1 KiB up
     *     to 1 GiB)
     */
    private FuseMountOptions withReadAhead(FuseMountOptions fuse) throws UsageException {
        if (readAhead == null) {
            return fuse;
        }
        long bytes;
        try {
            bytes = Units.parseSize(readAhead, 1024);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--read-ahead: " + e.getMessage());
        }
        try {
            return fuse.withReadAheadBytes(bytes);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--read-ahead must be 0 or a multiple of 1k up to 1g, got " + readAhead);
        }
    }

    /**
     * @return {@code --cluster} with {@code --node-id} or a new node id; null without {@code --cluster}
     * @throws UsageException if either does not parse, or {@code --node-id} comes without {@code --cluster}
     */
    private ClusterSpec clusterSpec() throws UsageException {
        if (clusterOption == null) {
            if (nodeId != null) {
                throw new UsageException("--node-id is for a cluster node: give --cluster too");
            }
            return null;
        }
        try {
            return ClusterSpec.parse(clusterOption).withNodeId(nodeId != null ? nodeId : ZkClusterJoinProvider.newNodeId());
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad " + (nodeId != null && e.getMessage().startsWith("node id") ? "--node-id"
                    : "--cluster") + ": " + e.getMessage());
        }
    }
}
