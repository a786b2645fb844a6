package dev.iomap.spi;

import dev.iomap.api.NotSupportedException;
import dev.iomap.api.FsckOptions;
import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.Zone;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A filesystem model plugged into iomap4j (xfs-like, zonefs-like, or a third party's). An
 * {@link AdapterPlugin} declares it in {@link AdapterPlugin#adapters()}; the core binds it under
 * {@link #name()}, where {@code IomapFileSystems.format/mount/fsck(name, ...)} find it. An adapter
 * needs no Guice of its own.
 *
 * <p>The adapter owns the on-device format; the core owns the page cache and drives the adapter
 * through {@link MountedFileSystem}. Implementations are immutable and thread-safe; one instance
 * serves every mount.
 */
public interface FileSystemAdapter {

    /** @return the adapter's unique name, lower case with dashes (e.g. {@code xfs-like}) */
    String name();

    /** @return one line saying what the adapter models */
    String description();

    /**
     * What the adapter can do, declared in one place; implications are added by
     * {@link Capability#withImplied}.
     *
     * @return the capabilities
     */
    Set<Capability> capabilities();

    /**
     * Whether the adapter formats and mounts only a zoned device ({@link dev.iomap.device.ZonedBlockDevice}),
     * as zonefs does: tools make a zoned image for it and refuse to give it a plain one. The default
     * answers false: the adapter takes any block device (and is given a plain one by the tools).
     *
     * @return true if {@link #format} and {@link #mount} refuse a device that is not zoned
     */
    default boolean requiresZonedDevice() {
        return false;
    }

    /**
     * Writes an empty filesystem (a root directory and nothing else) to the device and flushes it.
     *
     * @param device the device; its previous contents are lost
     * @param options block size, label, adapter properties
     * @throws IOException if the device is too small, an option is invalid, or the device fails
     */
    void format(BlockDevice device, FormatOptions options) throws IOException;

    /**
     * Checks, without touching any device, that {@link #format} would accept these options on a
     * device of this geometry: {@code mkfs} calls it before it changes anything. The default
     * checks nothing (format then finds the errors, possibly after it has written).
     *
     * @param deviceBlockSize the device's block size
     * @param capacity the device's size in bytes
     * @param options block size, label, adapter properties
     * @throws IOException as {@link #format} would for the options or the size
     */
    default void checkFormat(int deviceBlockSize, long capacity, FormatOptions options) throws IOException {
    }

    /**
     * Checks, without touching any device, that {@link #format} would accept these options on a zoned
     * device reporting {@code zones}: what {@code mkfs} calls, before it makes an emulated zoned device,
     * with the zone report that device will give (every sequential zone empty). An adapter that needs
     * to know the zones (zonefs-like) overrides it; the default checks as
     * {@link #checkFormat(int, long, FormatOptions)} does for a device of the zones' total size.
     *
     * @param deviceBlockSize the device's block size
     * @param zones the device's zone report, in order from offset 0
     * @param options block size, label, adapter properties
     * @throws IOException as {@link #format} would for the options or the zones
     */
    default void checkFormat(int deviceBlockSize, List<Zone> zones, FormatOptions options) throws IOException {
        checkFormat(deviceBlockSize, zones.isEmpty() ? 0 : zones.getLast().end(), options);
    }

    /**
     * Whether the device seems to hold this adapter's filesystem (its superblock's magic), damaged
     * or not, so that {@code mkfs} does not overwrite one unasked. Reads, never writes. The default
     * answers false.
     *
     * @param device the device
     * @return true if it carries this adapter's format
     * @throws IOException on a device error
     */
    default boolean probe(BlockDevice device) throws IOException {
        return false;
    }

    /**
     * What {@link #probe} answers, with the block size the superblock records, so that a tool
     * can open an image without being told how. Reads only the start of the device (its first 512
     * bytes suffice for every adapter of this project), through a device of any block size up to the
     * filesystem's, usually 512; never writes, and checks no checksum: a damaged superblock is still
     * recognised, with {@link ProbedFormat#UNKNOWN_BLOCK_SIZE} if its block size is out of range. The
     * default answers {@link #probe} with an unknown block size: an adapter overrides it when its
     * superblock says its block size.
     *
     * @param device the device, often a 512-byte-block view of an image
     * @return the format found, or empty if the device does not carry this adapter's
     * @throws IOException on a device error
     */
    default Optional<ProbedFormat> probeFormat(BlockDevice device) throws IOException {
        return probe(device)
                ? Optional.of(new ProbedFormat(name(), ProbedFormat.UNKNOWN_BLOCK_SIZE))
                : Optional.empty();
    }

    /**
     * Mounts a formatted device: checks the superblock, replays the journal, loads what it needs.
     *
     * @param device the device
     * @param options the mount options
     * @return the adapter's side of the mount
     * @throws CorruptFileSystemException if the image is not this adapter's or is damaged
     * @throws IOException on a device error
     */
    MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException;

    /**
     * Checks every invariant of an unmounted image without changing it.
     *
     * @param device the device
     * @return the problems found, each with its location
     * @throws IOException on a device error
     */
    FsckReport fsck(BlockDevice device) throws IOException;

    /**
     * Whether an unmounted image was left needing recovery: not unmounted cleanly, so that mounting it as
     * it was left means replaying its journal onto the device. A mount of a write-protected device refuses
     * such an image (XFS's and ext4's "cannot mount read-only") unless told {@code norecovery}. Reads, never
     * writes. The default answers false: an adapter without a journal, or one whose read-only mount
     * replays into memory as bcachefs does, can always be mounted read-only.
     *
     * @param device the device, holding this adapter's format
     * @return whether it needs recovery
     * @throws IOException on a device error or a damaged superblock
     */
    default boolean needsRecovery(BlockDevice device) throws IOException {
        return false;
    }

    /**
     * Checks an unmounted image without changing it, with options. The default does the metadata
     * check of {@link #fsck(BlockDevice)} and refuses a scrub: an adapter that declares
     * {@link Capability#DATA_CHECKSUMS} overrides this.
     *
     * @param device the device
     * @param options what to check beyond the metadata
     * @return the problems found, each with its location (a bad extent by inode and file offset)
     * @throws NotSupportedException for a scrub on an adapter without data checksums
     * @throws IOException on a device error
     */
    default FsckReport fsck(BlockDevice device, FsckOptions options) throws IOException {
        if (options.scrub()) {
            throw new NotSupportedException(name() + " keeps no data checksums: there is nothing to scrub");
        }
        return fsck(device);
    }

    /**
     * This adapter as a node of a cluster sharing one device: the adapter whose every mount joins
     * through {@code join} (its journal slot, its glock manager, its write fence). The runtime calls it
     * for a mount whose {@link MountOptions#cluster()} is set. The default refuses: an adapter with a
     * cluster mode (gfs2-like) overrides it.
     *
     * @param join how each mount joins the cluster
     * @return the adapter to mount the cluster node with
     * @throws NotSupportedException if this adapter cannot share a device with other nodes
     */
    default FileSystemAdapter clusterNode(dev.iomap.spi.lock.ClusterJoin join) throws NotSupportedException {
        throw new NotSupportedException(name() + " cannot mount as a cluster node (--cluster): only an adapter"
                + " with a cluster mode can share its device with other nodes (gfs2-like)");
    }
}
