package dev.iomap.adapter.xfs;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.ProbedFormat;
import java.io.IOException;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * The xfs-like filesystem: allocation groups with free-space indexes and reference counts, inodes with a
 * data fork and a copy-on-write fork of extents, delayed allocation converted to unwritten extents at
 * writeback and to written ones at I/O completion, speculative EOF preallocation, reflink, and a metadata
 * journal. The on-device format is in the module README.
 *
 * <p>Immutable and thread-safe; one instance serves every mount.
 */
public final class XfsLikeAdapter implements FileSystemAdapter {
    /** The adapter's name. */
    public static final String NAME = "xfs-like";

    /** Creates the adapter (it holds no state). */
    public XfsLikeAdapter() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "XFS model: allocation groups, delayed allocation, unwritten extents, reflink with a COW fork, "
                + "metadata journal";
    }

    /**
     * Everything: directories; fallocate allocate, punch and zero; reflink clones with copy-on-write and
     * unshare; truncate; writes anywhere; fsync that survives a power cut (journal commit and flush);
     * rename exchange (both entries, parent pointers and link counts in one journal transaction); symbolic
     * and hard links; mode, owner and four nanosecond times; extended attributes.
     */
    @Override
    public Set<Capability> capabilities() {
        return Capability.withImplied(EnumSet.of(Capability.DIRECTORIES, Capability.FALLOCATE, Capability.UNWRITTEN_EXTENTS,
                Capability.PUNCH_HOLE, Capability.ZERO_RANGE, Capability.COPY_ON_WRITE, Capability.CLONE,
                Capability.TRUNCATE, Capability.RANDOM_WRITE, Capability.DURABLE_FSYNC,
                Capability.RENAME_EXCHANGE, Capability.SYMLINKS, Capability.HARD_LINKS, Capability.SPECIAL_FILES,
                Capability.POSIX_ATTRIBUTES, Capability.XATTRS, Capability.DIRECT_IO, Capability.ATOMIC_WRITES,
                Capability.INODE_FLAGS));
    }

    /**
     * {@inheritDoc}
     *
     * <p>The block size may be larger than the device's (4 KiB blocks on 512-byte sectors). Properties: {@code agcount} (allocation groups),
     * {@code inodes} (inode table slots), {@code journalblocks} (journal size).
     */
    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        XfsFormatter.format(device, options);
    }

    @Override
    public void checkFormat(int deviceBlockSize, long capacity, FormatOptions options) throws IOException {
        XfsFormatter.check(deviceBlockSize, capacity, options);
    }

    /** @return whether block 0 carries the xfs-like superblock magic */
    @Override
    public boolean probe(BlockDevice device) throws IOException {
        return XfsSuperblock.CODEC.probe(device, 0);
    }

    /**
     * @return xfs-like with the block size in the superblock payload's first field, if block 0
     *     carries the magic
     */
    @Override
    public Optional<ProbedFormat> probeFormat(BlockDevice device) throws IOException {
        return XfsSuperblock.CODEC.probePayload(device, 0).map(payload -> ProbedFormat.of(NAME, payload.getInt(0)));
    }

    @Override
    public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
        options.checkAdapterOptions(NAME, java.util.Set.of());
        return XfsLikeMount.mount(device);
    }

    /** {@inheritDoc} Its superblock says so: it is marked clean only by an unmount. */
    @Override
    public boolean needsRecovery(BlockDevice device) throws IOException {
        return !XfsSuperblock.read(device).clean();
    }

    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        return XfsFsck.check(device);
    }
}
