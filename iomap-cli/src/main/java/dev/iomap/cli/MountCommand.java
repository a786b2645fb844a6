package dev.iomap.cli;

import dev.iomap.cluster.ZkClusterJoinProvider;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceBusyException;
import dev.iomap.api.ClusterSpec;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.cli.observe.MountObservation;
import dev.iomap.cli.observe.MountRuntime;
import dev.iomap.fuse.FuseMountOptions;
import dev.iomap.fuse.IomapMount;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code iomap mount}: mounts an image on a directory with FUSE. Launched by {@code bin/iomap} it detaches
 * once the mount is up ({@link Detach}) and logs to {@code --log}; with {@code -f} it stays in the
 * foreground until Ctrl-C or {@code fusermount3 -u}. Either way the unmount writes everything back and
 * leaves the image clean. The mount's source in the mount table is the image's path (its type
 * {@code fuse.iomap}); over a loop device ({@code --blkdev}, or a loop device given as IMAGE) it is
 * {@code fuseblk.iomap} with the loop device as its source, and {@code umount} returns only once the image
 * is clean ({@code FUSE_DESTROY}). Every option has an {@code -o} spelling ({@link MountOptionList}), so
 * that {@code mount -t fuse.iomap} and fstab lines work through the helper {@code install-mount-helper}
 * writes. If the image is still held (a mount unmounted a moment ago still writing back) the mount waits
 * for it, up to {@code --busy-timeout}.
 *
 * <p>With {@code --cluster zk=HOST:PORT[,HOST:PORT]} the mount is one node of several sharing the image
 * (gfs2-like only; {@link MountOptions#cluster()}): the image is opened for writing shared with the other
 * nodes only ({@code FileBlockDevice.openShared}) and with direct I/O, so that no node reads from the
 * host's page cache what another node has since overwritten; the node id is {@code --node-id} or a new
 * one (host name and a random suffix), printed on stderr.
 */
@Command(name = "mount", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Mounts an image on a directory with FUSE; returns once it is mounted (exit status 0) and"
                + " keeps serving it in the background, logging to --log. With -f it stays in the foreground.",
                "umount MOUNTPOINT (or fusermount3 -u, or Ctrl-C in the foreground) unmounts and leaves the image"
                + " clean.",
                "Every option also has an -o spelling: its long name without dashes, e.g. -o adapter=gfs2-like,"
                + "node_id=a,read_ahead=2m,no_flusher; other -o options go to FUSE (allow_other, ro, noatime, ...)"
                + " or, if FUSE does not know them, to the adapter (-o data=journal). A comma inside a value:"
                + " \\, or the value in double quotes (-o cluster=\"zk=h1:2181,h2:2181\").",
                "Access times: relatime (default), strictatime or noatime, as Linux; nodiratime.",
                "Needs fuse3 (libfuse3, /dev/fuse). bin/iomap install-mount-helper makes mount -t fuse.iomap and"
                + " fstab lines work."})
final class MountCommand implements Callable<Integer> {
    private static final long BUSY_POLL_MILLIS = 100;
    /**
     * How long a wait for a busy image goes unsaid (at most half the busy timeout): a mount unmounted a
     * moment before may take seconds to write back on a loaded machine, and xfstests compares what mount
     * prints (generic/604 printed it after 1 s under five configs at once).
     */
    private static final long BUSY_NOTICE_MILLIS = 5000;

    /**
     * What a mount does once it is up, before it serves the mount until unmounted: by default it detaches
     * from {@code bin/iomap} ({@link Detach}); the mount server ({@link MountServer}) answers its client.
     */
    interface Ready {
        /**
         * Called once, with the mount up and the command's output flushed.
         *
         * @param mount the mount
         * @param foreground whether {@code -f} was given (the caller is to hear only when it is unmounted)
         * @throws IOException if the mount cannot go on: it is then unmounted, and the command fails
         */
        void mounted(IomapMount mount, boolean foreground) throws IOException;
    }

    /** What is done once mounted; null: detach from bin/iomap, if it launched this process to. */
    private final Ready ready;

    /** A mount run by bin/iomap: it detaches once mounted if bin/iomap launched it to ({@link Detach}). */
    MountCommand() {
        this(null);
    }

    /** @param ready what is done once mounted, instead of detaching from bin/iomap */
    MountCommand(Ready ready) {
        this.ready = ready;
    }

    @Spec
    private CommandSpec spec;

    @Mixin
    private ImageOptions image;

    @Parameters(index = "1", paramLabel = "MOUNTPOINT", description = "an existing directory")
    private Path mountPoint;

    @Option(names = {"-f", "--foreground"}, description = "stay in the foreground until unmounted, logging to"
            + " stderr (without it, bin/iomap returns once the image is mounted)")
    private boolean foreground;

    @Option(names = "--log", paramLabel = "FILE|syslog", description = "where a detached mount logs: a file"
            + " (appended to) or syslog (through logger, tag iomap); default /var/log/iomap/MOUNTPOINT.log for root,"
            + " $XDG_STATE_HOME/iomap/MOUNTPOINT.log (~/.local/state/iomap/...) for other users, MOUNTPOINT being"
            + " the mount point's path with - for /")
    private String log;

    @Option(names = "--busy-timeout", paramLabel = "SECONDS", defaultValue = "60",
            description = "how long to wait for the image while another process still holds it (a mount just"
                    + " unmounted writing back; 0 refuses at once; default: ${DEFAULT-VALUE})")
    private long busyTimeoutSeconds = 60;

    @Option(names = "--blkdev", description = "mount as fuseblk over a loop device attached to the image (root"
            + " only; the loop device is the mount's source and goes with the unmount), so that umount returns"
            + " only once the image is clean; a loop device given as IMAGE is mounted so too")
    private boolean blkdev;

    @Option(names = "--page-size", paramLabel = "SIZE",
            description = "page size of the mount's cache (default: 4096, also under larger blocks: their folios"
                    + " hold at least one block)")
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

    @Option(names = "--norecovery", description = "with ro only, as XFS takes it (-o ro,norecovery): the journal"
            + " is not replayed onto the image. Every ro mount here leaves the image as it is: a journal that needs"
            + " replaying is replayed in memory only, so the mount shows the recovered file system")
    private boolean norecovery;

    @Option(names = {"-o", "--options"}, paramLabel = "LIST",
            description = "a comma list of options: this command's own (long names without dashes), FUSE's"
                    + " (allow_other, ro, noatime, ...) and the adapter's (data=journal) (repeatable); ro opens the"
                    + " image read-only: what the mount itself writes (its mounted flag, a journal replay) stays in"
                    + " memory, and no access time is updated")
    private List<String> optionLists = new ArrayList<>();

    /** The FUSE options of {@link #optionLists}, each one option, escaped for libfuse. */
    private final List<String> fuseOptions = new ArrayList<>();

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

    @Option(names = "--metrics", paramLabel = "127.0.0.1:PORT", description = "serve the mount's counters in"
            + " Prometheus' text format at http://127.0.0.1:PORT/metrics (a loopback address only; PORT 0 picks one,"
            + " printed on stderr)")
    private String metrics;

    @Override
    @SuppressWarnings("try") // the observation is open while the mount runs, and closed after it
    public Integer call() throws Exception {
        applyOptionLists();
        ClusterSpec cluster = clusterSpec();
        Map<String, String> adapterOptions = FsOptions.parse(fsOptions);
        List<CacheSettings.Assignment> assignments = new ArrayList<>();
        for (String setting : settings) {
            assignments.add(CacheSettings.Assignment.parse(setting));
        }
        PageCacheOptions cache = CacheSettings.options(pageSize == null ? "4096" : pageSize, assignments);
        // A cluster node's image changes under it (other nodes write): nothing may stay in the kernel's cache.
        Path loop = loopDeviceGiven();
        FuseMountOptions fuse = FuseMountOptions.defaults().withDirectIo(cluster != null || (!kernelCache && !writebackCache))
                .withReadCache(cluster == null && !noReadCache).withWritebackCache(cluster == null && writebackCache)
                .withSharedImage(cluster != null).withFuseOptions(fuseOptions);
        boolean writeProtected = loop != null && !fuse.readOnly() && LoopDevice.isReadOnly(loop);
        if (writeProtected && cluster != null) {
            throw new UsageException(loop + " is write-protected, and a cluster node mounts read-write");
        }
        if (writeProtected) {
            // As mount(8) does for a kernel file system on a write-protected device (blockdev --setro).
            fuseOptions.add("ro");
            fuse = fuse.withFuseOptions(fuseOptions);
        }
        fuse = withReadAhead(fuse);
        if (norecovery && !fuse.readOnly()) {
            throw new UsageException("-o norecovery needs ro (-o ro,norecovery): a read-write mount replays the"
                    + " journal first");
        }
        if (fuse.readOnly() && cluster != null) {
            throw new UsageException("-o ro: a cluster node mounts read-write (a read-only node would still hold"
                    + " a journal and take part in recovery); mount without ro");
        }
        BlockDevice device = openWaiting(cluster != null, fuse.readOnly());
        if (writeProtected) {
            refuseIfRecoveryNeeded(device, loop);
        }
        boolean attached = false;
        IomapFileSystem fs;
        try {
            MountOptions options = new MountOptions(cache, !noFlusher, adapterOptions);
            if (cluster != null) {
                options = options.withCluster(cluster);
                spec.commandLine().getErr().println("iomap: joining " + cluster.scheme() + "=" + cluster.address()
                        + " as node " + cluster.nodeId().orElseThrow());
                spec.commandLine().getErr().flush();
            }
            fs = IomapFileSystems.mount(image.adapter(), device, options);
            if (blkdev && loop == null) {
                loop = attachLoop(fs);
                attached = true;
            }
        } catch (IOException | RuntimeException | UsageException e) {
            device.close();
            throw e;
        }
        fuse = loop != null ? fuse.withBlockDevice(loop) : fuse.withSource(source());
        IomapMount mount;
        MountObservation observation = null;
        try {
            observation = observe(fs);
            mount = IomapMount.mount(fs, device, mountPoint, fuse);
        } catch (IOException e) {
            // Mounting failed, so nothing was closed yet.
            try (device; fs; MountObservation _ = observation) {
                if (attached) {
                    LoopDevice.detach(loop);
                }
                throw e;
            }
        }
        if (attached) {
            LoopDevice.detach(loop);   // autoclear: it goes when the kernel lets go of it at unmount
        }
        spec.commandLine().getOut().flush();
        spec.commandLine().getErr().flush();
        // From here the mount owns fs and device and closes both; serving blocks until unmounted.
        try (MountObservation _ = observation) {
            if (ready == null) {
                detachIfLaunched(mount);
            } else {
                try {
                    ready.mounted(mount, foreground);
                } catch (IOException | RuntimeException e) {
                    mount.close();
                    throw e;
                }
            }
            return mount.serveUntilUnmounted();
        }
    }

    /**
     * A mount asked read-write of a write-protected device goes on read-only, as mount(8) does for a kernel
     * file system, unless the image needs its journal replayed onto the device ({@code norecovery} mounts
     * it anyway: a read-only mount replays in memory).
     *
     * @param device the image, opened read-only under an overlay
     * @param loop the write-protected device
     * @throws IOException (the device closed) if the image needs recovery, in the words mount(8) uses
     */
    private void refuseIfRecoveryNeeded(BlockDevice device, Path loop) throws IOException {
        boolean dirty;
        try {
            dirty = !norecovery && IomapFileSystems.needsRecovery(image.adapter(), device);
        } catch (IOException | RuntimeException e) {
            device.close();
            throw e;
        }
        if (dirty) {
            device.close();
            throw new IOException("mount: " + loop + ": cannot mount " + loop + " read-only: it was not unmounted"
                    + " cleanly, and its journal must be replayed onto the device, which is write-protected"
                    + " (-o ro,norecovery mounts it without writing)");
        }
        spec.commandLine().getErr().println("iomap mount: " + loop + ": WARNING: device write-protected, mounting"
                + " read-only.");
        spec.commandLine().getErr().flush();
    }

    /** The loop device an fuseblk mount attaches when --blkdev is given with an image file. */
    private Path attachLoop(IomapFileSystem fs) throws IOException, UsageException {
        if (image.image == null) {
            fs.close();
            throw new UsageException("--blkdev needs an image file, not an NBD export");
        }
        try {
            return LoopDevice.attach(image.image);
        } catch (IOException e) {
            fs.close();
            throw e;
        }
    }

    /**
     * Where bin/iomap launched the mount to detach ({@link Detach}) and -f is not given: sends the output to
     * the log and lets the launcher return; on failure unmounts and rethrows.
     */
    private void detachIfLaunched(IomapMount mount) throws IOException {
        int readyFd = Detach.readyDescriptor();
        if (readyFd < 0) {
            return;
        }
        if (foreground) {   // -o foreground: the launcher then waits for this process to end
            Detach.stayInForeground(readyFd);
            return;
        }
        try {
            Detach.detach(readyFd, logTarget());
        } catch (IOException | RuntimeException e) {
            mount.close();
            throw new IOException("mounted on " + mountPoint + " but could not detach (log " + logTarget()
                    + "): " + e.getMessage() + "; unmounted again", e);
        }
    }

    /** @return {@code --log}, or its default */
    private String logTarget() {
        if (log != null) {
            return log;
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        return Detach.defaultLog(mountPoint, root, System.getenv("XDG_STATE_HOME"), System.getProperty("user.home"))
                .toString();
    }

    /** @return the mount's source in the mount table: the image's absolute path, or the NBD export */
    private String source() {
        return image.image != null ? image.image.toAbsolutePath().normalize().toString() : image.name();
    }

    /**
     * A loop device given as IMAGE: the mount goes to its backing file, as fuseblk over the device.
     *
     * @return the loop device, or null where IMAGE is not a block device
     */
    private Path loopDeviceGiven() throws IOException, UsageException {
        if (image.image == null || !LoopDevice.isBlockDevice(image.image)) {
            return null;
        }
        Path device = image.image;
        image.image = LoopDevice.backingFile(device);
        return device;
    }

    /**
     * Opens the image, waiting up to {@code --busy-timeout} while another process holds it: after
     * {@code umount}, the previous mount may still be writing back and closing (a plain FUSE unmount
     * returns before the file system has heard of it).
     *
     * @param shared whether for a cluster node
     * @param readOnly whether for a read-only mount ({@code -o ro}): the image opened read-only under an
     *     in-memory overlay that keeps what the mount itself writes (its mounted flag, a journal replay), so
     *     that the image is not changed by one byte
     * @throws DeviceBusyException if it is still held when the time is up (the holder's refusal, and how long
     *     it waited); at once with {@code --busy-timeout 0}, or where the mount table lists a mount of the
     *     image ({@link MountedImages})
     */
    private BlockDevice openWaiting(boolean shared, boolean readOnly) throws IOException, UsageException {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(busyTimeoutSeconds);
        boolean said = false;
        while (true) {
            try {
                return readOnly ? image.openReadOnlyForMount() : shared ? image.openShared() : image.openExisting();
            } catch (DeviceBusyException busy) {
                if (busyTimeoutSeconds <= 0) {
                    throw busy;
                }
                // Mounted (still in the mount table): waiting would be in vain; only a mount unmounted a moment
                // ago, still writing back, is waited for.
                Optional<Path> mounted = image.image == null ? Optional.<Path>empty()
                        : MountedImages.mountPointOf(image.image);
                if (mounted.isPresent()) {
                    throw new DeviceBusyException(image.name() + " is mounted on " + mounted.get() + ": unmount it"
                            + " first (an image has one writer; findmnt -S " + image.name() + ")", busy);
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new DeviceBusyException(busy.getMessage() + " (waited " + busyTimeoutSeconds + " s for it"
                            + " to be let go of: is it mounted elsewhere, findmnt -S " + image.name() + ", or in use"
                            + " by mkfs or fsck? --busy-timeout SECONDS waits longer)", busy);
                }
                // Said only once the wait is long enough to notice: a mount just unmounted usually lets go
                // within milliseconds, and a test suite compares what mount prints (xfstests generic/604).
                long notice = Math.min(BUSY_NOTICE_MILLIS, TimeUnit.SECONDS.toMillis(busyTimeoutSeconds) / 2);
                if (!said && System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(notice)) {
                    spec.commandLine().getErr().println("iomap: " + image.name() + " is busy; waiting up to "
                            + busyTimeoutSeconds + " s for its previous holder to finish");
                    spec.commandLine().getErr().flush();
                    said = true;
                }
                sleep(BUSY_POLL_MILLIS);
            }
        }
    }

    private static void sleep(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting for the image");
        }
    }

    /**
     * Splits the {@code -o} lists ({@link MountOptionList}): this command's options are applied as if given
     * with dashes, FUSE's go to {@link #fuseOptions}, mount(8)'s are dropped, the rest go to the adapter.
     *
     * @throws UsageException for a list that does not parse, or a flag of this command given a value
     */
    private void applyOptionLists() throws UsageException {
        for (String list : optionLists) {
            for (MountOptionList.Item item : MountOptionList.parse(list)) {
                OptionSpec own = ownOption(item.key());
                if (own != null) {
                    apply(own, item);
                } else if (MountOptionList.FUSE.contains(item.key())) {
                    fuseOptions.add(MountOptionList.forLibfuse(item));
                } else if (!item.mountOnly()) {
                    fsOptions.add(item.text());
                }
            }
        }
    }

    /** @return the option of this command that {@code -o KEY} names, or null ({@code -o o} is not one) */
    private OptionSpec ownOption(String key) {
        if (key.length() < 2 || key.equals("options") || key.equals("help") || key.equals("version")) {
            return null;
        }
        return spec.findOption("--" + key.replace('_', '-'));
    }

    @SuppressWarnings("unchecked") // the list options of this command are lists of strings
    private static void apply(OptionSpec option, MountOptionList.Item item) throws UsageException {
        String name = option.longestName();
        if (option.arity().max() == 0) {
            if (item.value() != null) {
                throw new UsageException("-o " + item.text() + ": " + name + " takes no value");
            }
            option.setValue(true);
            return;
        }
        if (item.value() == null) {
            throw new UsageException("-o " + item.key() + ": " + name + " needs a value (" + item.key() + "=...)");
        }
        if (option.isMultiValue()) {
            List<String> values = new ArrayList<>(option.getValue() == null ? List.of() : (List<String>) option.getValue());
            values.add(item.value());
            option.setValue(values);
        } else if (option.type() == long.class || option.type() == Long.class) {
            try {
                option.setValue(Long.parseLong(item.value()));
            } catch (NumberFormatException e) {
                throw new UsageException("-o " + item.text() + ": " + name + " takes a whole number");
            }
        } else {
            option.setValue(item.value());
        }
    }

    /**
     * Starts what lets {@code iomap trace}, {@code iomap top}, JMX and (with {@code --metrics}) Prometheus
     * see inside this mount (an {@link IOException} if that fails: the caller unmounts).
     */
    private MountObservation observe(IomapFileSystem fs) throws IOException {
        MountObservation observation = MountObservation.start(fs, mountPoint, metrics, MountRuntime.forCurrentUser());
        if (observation.metricsPort() >= 0) {
            spec.commandLine().getErr().println("iomap: metrics at http://"
                    + metrics.substring(0, metrics.lastIndexOf(':') + 1) + observation.metricsPort() + "/metrics");
            spec.commandLine().getErr().flush();
        }
        return observation;
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
