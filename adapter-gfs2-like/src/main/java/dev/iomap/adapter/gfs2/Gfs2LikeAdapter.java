package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.lock.InProcessLockManager;
import dev.iomap.adapter.support.lock.InProcessLockSpace;
import dev.iomap.api.Capability;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.ProbedFormat;
import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.ClusterJoin;
import java.io.IOException;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gfs2-like filesystem: blocks allocated at write time in a height-indexed indirect tree, stuffed
 * files, ordered data (and journaled data per file or per mount), resource groups with two bits per
 * block, per-node journals. The on-device format is in the module README.
 *
 * <p>Mount options: {@code data=ordered} (default) or {@code data=journal} (every regular file's data
 * through the journal), {@code journal=K} (this node's journal, default 0). Others are refused.
 *
 * <p>Thread-safe; one instance serves every mount (it holds only the lock space its mounts share, if given).
 */
public final class Gfs2LikeAdapter implements FileSystemAdapter {
    /** The adapter's name. */
    public static final String NAME = "gfs2-like";

    private final InProcessLockSpace lockSpace;
    private final ClusterJoin cluster;
    private final AtomicInteger nodes = new AtomicInteger();

    /** Creates the adapter: every mount is a single node with a lock manager of its own. */
    public Gfs2LikeAdapter() {
        this.lockSpace = null;
        this.cluster = null;
    }

    /**
     * Creates an adapter whose mounts are nodes of a cluster sharing one device: each mount joins
     * through {@code cluster}, naming the filesystem by its UUID ({@link Gfs2Layout#filesystemUuid}, so two
     * images formatted alike are two clusters), which gives it its journal slot and its lock manager (the mount option
     * {@code journal=K} is refused: the cluster assigns the slot). Such a mount takes inode glocks for
     * every inode operation, resource-group glocks to allocate and free, the rename glock for renames,
     * reads every dinode, indirect block and resource group from the device after a demotion dropped it,
     * and checkpoints its journal whenever it gives a glock up, so other nodes read current metadata
     * from the device.
     *
     * @param cluster how a mount joins the cluster
     */
    public Gfs2LikeAdapter(ClusterJoin cluster) {
        this.lockSpace = null;
        this.cluster = java.util.Objects.requireNonNull(cluster, "cluster");
    }

    /**
     * Creates an adapter whose mounts are nodes of one in-process cluster: each mount gets an
     * {@link InProcessLockManager} over {@code lockSpace}, so another manager over the same space (another
     * node, or a test) can demote this node's glocks.
     *
     * @param lockSpace the lock table shared with the other nodes
     */
    public Gfs2LikeAdapter(InProcessLockSpace lockSpace) {
        this.lockSpace = java.util.Objects.requireNonNull(lockSpace, "lockSpace");
        this.cluster = null;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "GFS2 model: allocation at write time in an indirect tree, stuffed files, ordered and journaled data, "
                + "resource groups, per-node journals";
    }

    /**
     * Directories; fallocate (allocates and zeroes: there is no unwritten state), punch and zero; truncate;
     * writes anywhere; fsync that survives a power cut (journal commit after the ordered data); rename
     * exchange in one transaction; symbolic and hard links; mode, owner and four times; extended
     * attributes; journaled data per file (chattr +j, inherited from a directory's flag) or per mount
     * ({@code data=journal}); the inode flags sync, immutable, append-only, nodump, noatime and DAX, kept
     * in the dinode's flags word (the core enforces them). No reflink, no copy-on-write, no unwritten
     * extents.
     */
    @Override
    public Set<Capability> capabilities() {
        return Capability.withImplied(EnumSet.of(Capability.DIRECTORIES, Capability.FALLOCATE,
                Capability.PUNCH_HOLE, Capability.ZERO_RANGE, Capability.TRUNCATE, Capability.RANDOM_WRITE,
                Capability.DURABLE_FSYNC, Capability.RENAME_EXCHANGE, Capability.SYMLINKS, Capability.HARD_LINKS,
                Capability.SPECIAL_FILES,
                Capability.POSIX_ATTRIBUTES, Capability.XATTRS, Capability.JOURNALED_DATA,
                Capability.DIRECT_IO, Capability.INODE_FLAGS));
    }

    /**
     * {@inheritDoc}
     *
     * <p>The device's block size must be the filesystem's. Properties: {@code journals},
     * {@code journalblocks}, {@code rgblocks} (see the README); others are refused.
     */
    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        Gfs2Formatter.format(device, options);
    }

    @Override
    public void checkFormat(int deviceBlockSize, long capacity, FormatOptions options) throws IOException {
        Gfs2Formatter.plan(deviceBlockSize, capacity, options);
    }

    /** @return whether block 0 carries the gfs2-like superblock magic */
    @Override
    public boolean probe(BlockDevice device) throws IOException {
        return Gfs2Layout.CODEC.probe(device, 0);
    }

    /** @return gfs2-like with the block size in the superblock payload's first field, if block 0 has the magic */
    @Override
    public Optional<ProbedFormat> probeFormat(BlockDevice device) throws IOException {
        return Gfs2Layout.CODEC.probePayload(device, 0).map(payload -> ProbedFormat.of(NAME, payload.getInt(0)));
    }

    @Override
    public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
        options.checkAdapterOptions(NAME, Gfs2LikeMount.OPTIONS);
        String data = options.adapterOption("data").orElse("ordered");
        if (!data.equals("ordered") && !data.equals("journal")) {
            throw new InvalidRangeException("gfs2-like mount option data=" + data + ": use ordered or journal");
        }
        if (cluster != null) {
            if (options.adapterOption("journal").isPresent()) {
                throw new InvalidRangeException("gfs2-like mount option journal= is not taken on a cluster mount: "
                        + "the cluster assigns the journal");
            }
            Gfs2Layout layout = Gfs2Layout.read(device);
            FencedDevice fenced = new FencedDevice(device, null);
            var reclaimDue = new java.util.concurrent.atomic.AtomicBoolean();
            ClusterContext context = cluster.join(layout.filesystemUuid(device).toString(), layout.journals(),
                    slot -> {
                        long replayed = Mounts.replayJournal(fenced, layout, slot);
                        reclaimDue.set(true);   // the dead node's open unlinked inodes are free to go
                        return replayed;
                    });
            fenced.arm(context::checkWrite);
            return Mounts.mountNode(fenced, layout, data.equals("journal"), context, reclaimDue);
        }
        int journal;
        try {
            journal = Integer.parseInt(options.adapterOption("journal").orElse("0"));
        } catch (NumberFormatException e) {
            throw new InvalidRangeException("gfs2-like mount option journal=" + options.adapterOption("journal").get()
                    + " is not a number");
        }
        InProcessLockManager locks = lockSpace == null ? new InProcessLockManager()
                : new InProcessLockManager(lockSpace, "gfs2-like node " + nodes.incrementAndGet(), false);
        return Mounts.mount(device, data.equals("journal"), journal, locks);
    }

    /**
     * {@inheritDoc} Some node's journal holds transactions a mount would replay (a node unmounting
     * cleanly leaves its journal empty).
     */
    @Override
    public boolean needsRecovery(BlockDevice device) throws IOException {
        Gfs2Layout layout = Gfs2Layout.read(device);
        BlockDevice scratch = new ScratchOverlay(device);
        for (int j = 0; j < layout.journals(); j++) {
            Journal journal = Journal.open(scratch, layout.journalStart(j), layout.journalBlocks());
            if (!journal.inspect().isEmpty()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        return Gfs2Fsck.check(device);
    }

    /** @return {@code new Gfs2LikeAdapter(join)}: what a mount with {@code MountOptions.cluster} mounts with */
    @Override
    public FileSystemAdapter clusterNode(ClusterJoin join) {
        return new Gfs2LikeAdapter(join);
    }
}
