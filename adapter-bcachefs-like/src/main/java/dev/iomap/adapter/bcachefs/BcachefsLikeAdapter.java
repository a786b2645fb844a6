package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.ProbedFormat;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The bcachefs-like filesystem: copy-on-write extents keyed by their end offset in a checksummed
 * copy-on-write B-tree with a journal of keys, every data extent checksummed (crc32c, xxhash64 or
 * none) and verified whole before a byte of it is read, optional lz4 or zstd compression per extent,
 * space reserved per block by the write that dirties it, reflink by shared extents with reference
 * counts. The on-device format is in the module README.
 *
 * <p>Format properties: {@code checksum=crc32c|xxhash64|none} (default crc32c),
 * {@code compression=none|lz4|zstd} (default none), {@code extentmax=BYTES} (default 65536),
 * {@code nocow=true|false} (default false: overwrite unshared blocks in place, without checksums),
 * {@code journalblocks=N} (the store's journal; 0 for its default). Mount options: none (every key is
 * refused).
 *
 * <p>Thread-safe and immutable; one instance serves every mount.
 */
public final class BcachefsLikeAdapter implements FileSystemAdapter {
    /** The adapter's name. */
    public static final String NAME = "bcachefs-like";
    /** Known mount options: none. */
    static final Set<String> MOUNT_OPTIONS = Set.of();

    private final StoreAccess stores;

    /** Creates the adapter over the B-tree store. */
    public BcachefsLikeAdapter() {
        this(new BtreeStoreAccess());
    }

    BcachefsLikeAdapter(StoreAccess stores) {
        this.stores = Objects.requireNonNull(stores, "stores");
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "bcachefs model: copy-on-write checksummed extents in a copy-on-write B-tree with a journal of keys, "
                + "optional compression, per-block space reservations, reflink";
    }

    /**
     * Directories; fallocate (allocates and zeroes: there is no unwritten state), punch and zero; truncate;
     * writes anywhere, always copy-on-write; reflink by shared extents; fsync that survives a power cut (the
     * journal of keys is flushed up to the inode's last transaction after its data is on the device);
     * rename exchange in one transaction; symbolic and hard links; mode, owner and four times; extended
     * attributes; inode flags (sync, immutable, append, nodump, noatime, DAX: bcachefs's {@code bi_flags}).
     * No unwritten extents, no journaled data.
     */
    @Override
    public Set<Capability> capabilities() {
        return Capability.withImplied(EnumSet.of(Capability.DIRECTORIES, Capability.FALLOCATE,
                Capability.PUNCH_HOLE, Capability.ZERO_RANGE, Capability.COPY_ON_WRITE, Capability.CLONE,
                Capability.TRUNCATE, Capability.RANDOM_WRITE, Capability.DURABLE_FSYNC, Capability.RENAME_EXCHANGE,
                Capability.SYMLINKS, Capability.HARD_LINKS, Capability.SPECIAL_FILES, Capability.POSIX_ATTRIBUTES,
                Capability.XATTRS, Capability.INODE_FLAGS,
                Capability.DATA_CHECKSUMS, Capability.DIRECT_IO, Capability.ATOMIC_WRITES));
    }

    /**
     * {@inheritDoc}
     *
     * <p>The device's block size must be the filesystem's. Properties: see the class comment; others
     * are refused. The label (at most 32 bytes of UTF-8, no NUL) goes into the superblock.
     */
    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        Config config = plan(device.blockSize(), options);
        try (KeyStore store = stores.format(device, config)) {
            var update = store.update();
            update.put(Keys.config(), config.encode());
            update.put(Keys.nextIno(), BcachefsVolume.counters(Keys.ROOT_INO + 1, 1));
            InodeRecord root = new InodeRecord(Keys.ROOT_INO);
            Instant now = Instant.now();
            root.type = FileType.DIRECTORY;
            root.mode = 0755;
            root.nlink = 2;
            root.parent = Keys.ROOT_INO;
            root.atime = root.mtime = root.ctime = root.btime = now;
            update.put(Keys.inode(Keys.ROOT_INO), root.encode());
            update.commit();
            store.flushAll();
            store.setLabel(options.label()); // the checkpoint that ends format, its superblock with the label
        }
        device.flush();
    }

    private static Config plan(int deviceBlockSize, FormatOptions options) throws InvalidRangeException {
        if (deviceBlockSize != options.blockSize()) {
            throw new InvalidRangeException("bcachefs-like: the device's block size " + deviceBlockSize
                    + " is not the filesystem's " + options.blockSize());
        }
        KeyStore.checkLabel(options.label());
        return Config.parse(options);
    }

    @Override
    public void checkFormat(int deviceBlockSize, long capacity, FormatOptions options) throws IOException {
        stores.checkFormat(deviceBlockSize, capacity, plan(deviceBlockSize, options));
    }

    /** {@inheritDoc} Its journal holds entries after the last checkpoint (an unmount checkpoints). */
    @Override
    public boolean needsRecovery(BlockDevice device) throws IOException {
        return stores.needsReplay(device);
    }

    /** @return whether the device carries the store's superblock magic */
    @Override
    public boolean probe(BlockDevice device) throws IOException {
        return stores.probe(device) >= 0;
    }

    /** @return bcachefs-like with the block size its superblock records, if the device carries it */
    @Override
    public Optional<ProbedFormat> probeFormat(BlockDevice device) throws IOException {
        int blockSize = stores.probe(device);
        return blockSize < 0 ? Optional.empty() : Optional.of(ProbedFormat.of(NAME, blockSize));
    }

    @Override
    public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
        options.checkAdapterOptions(NAME, MOUNT_OPTIONS);
        refuseDamage(device);
        KeyStore store = stores.open(device, false);
        try {
            return BcachefsLikeMount.mount(store, device);
        } catch (IOException | RuntimeException e) {
            try {
                store.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Runs fsck's checks (without the scrub of data) before anything is written, as xfs-like's mount
     * does: the store's tree, allocation and journal, then the filesystem's cross-structure rules
     * (entries against inodes, a directory tree without cycles, sizes within the format's limit,
     * extents against the reference counts). A mount of what fsck flags would follow damage: read
     * zeros from a node copied over another, or write new data over blocks a forged allocation tree
     * calls free.
     *
     * @throws CorruptFileSystemException naming the first problem in one line, and how many more
     */
    private void refuseDamage(BlockDevice device) throws IOException {
        List<String> problems = fsck(device, false).problems();
        if (problems.isEmpty()) {
            return;
        }
        int more = problems.size() - 1;
        String first = problems.getFirst().strip().lines().findFirst().orElse("");
        throw new CorruptFileSystemException(NAME + ": " + first + (more > 0 ? " (and " + more + " more problems)" : "")
                + "; run fsck");
    }

    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        return fsck(device, false);
    }

    /**
     * {@inheritDoc} A scrub ({@link FsckOptions#scrub()}) reads every data extent and verifies its
     * checksum (an image formatted with {@code checksum=none}, or nocow extents, have none to verify:
     * they are read, so a device read error is still reported).
     */
    @Override
    public FsckReport fsck(BlockDevice device, FsckOptions options) throws IOException {
        return fsck(device, options.scrub());
    }

    /**
     * Checks an unmounted image without changing it: the store's tree (node checksums, key order,
     * allocation), then the filesystem's keys (link counts, entries, extents against sizes and reference
     * counts) and, with {@code scrub}, every checksummed or compressed data extent read and verified; a
     * bad one is reported with its inode and file offset.
     *
     * @param device the device
     * @param scrub whether to read and verify every data extent ({@code fsck --scrub})
     * @return the problems found
     * @throws IOException if the device fails
     */
    public FsckReport fsck(BlockDevice device, boolean scrub) throws IOException {
        List<String> problems = new ArrayList<>(stores.check(device));
        long extents = 0;
        try (KeyStore store = stores.open(device, true)) {
            BcachefsFsck fsck = new BcachefsFsck(store, device, stores.refCounts(device));
            problems.addAll(fsck.check(scrub));
            extents = fsck.heldBlocks;
        } catch (CorruptFileSystemException e) {
            problems.add("the store cannot be opened: " + e.getMessage());
        }
        return new FsckReport(problems, "store tree, inodes, directory entries, extents and reference counts of "
                + extents + " data blocks" + (scrub ? ", every data extent read and verified" : ""));
    }
}
