package dev.iomap.spi;

import dev.iomap.api.FsStat;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The mount's whole-filesystem operations, the kernel's {@code super_operations}: space counts,
 * durability, unmount, and the end of an inode's life ({@code evict_inode}, {@code drop_inode}).
 * Reached through {@link MountedFileSystem#superOps()}; thread-safe.
 *
 * <p>Errors: {@link dev.iomap.api.NoSpaceException}, {@link dev.iomap.api.NotSupportedException},
 * {@link dev.iomap.api.CorruptFileSystemException}, or the device's {@link IOException}.
 */
public interface SuperOps {

    /**
     * @return space and inode counts
     * @throws IOException on a device error
     */
    FsStat statfs() throws IOException;

    /**
     * The filesystem's UUID, as its superblock records it (or as the adapter derives a stable one for
     * an image made before it recorded one), for tools ({@code iomap stat}) and for naming the
     * filesystem to a cluster. This default: none.
     *
     * @return the UUID, or empty if the format has none
     * @throws IOException if the device fails while the adapter derives it
     */
    default Optional<UUID> uuid() throws IOException {
        return Optional.empty();
    }

    /**
     * The filesystem's label ({@code blkid}'s LABEL, {@code FS_IOC_GETFSLABEL}), as mkfs or
     * {@link #setLabel} left it in the superblock. This default: the format keeps none.
     *
     * @return the label, empty if none was given
     * @throws dev.iomap.api.NotSupportedException if the format keeps no label
     * @throws IOException on a device error
     */
    default String label() throws IOException {
        throw new dev.iomap.api.NotSupportedException("this file system keeps no label");
    }

    /**
     * Sets the label ({@code FS_IOC_SETFSLABEL}): when this returns the device holds it (written and
     * flushed), and {@link #label} and the next mount answer it. This default: refused.
     *
     * @param label the new label, UTF-8 text without NUL; empty clears it
     * @throws dev.iomap.api.InvalidRangeException if it is longer than the format holds
     * @throws dev.iomap.api.NotSupportedException if the format keeps no label, or sets it only at mkfs
     * @throws dev.iomap.api.FileSystemShutdownException after a shutdown
     * @throws IOException on a device error ({@link dev.iomap.device.ReadOnlyDeviceException} on a
     *     read-only device)
     */
    default void setLabel(String label) throws IOException {
        throw new dev.iomap.api.NotSupportedException("this file system keeps no label");
    }

    /**
     * Discards the free space of the byte range {@code [start, start + length)} (clipped to the file
     * system) in free extents of at least {@code minLength} bytes, as {@code FITRIM} ({@code fstrim})
     * asks: the device is told those blocks' contents are no longer needed (an image file gets holes
     * back). Only space that is free on the device is discarded, never space freed by a transaction not
     * yet durable (a crash could give it back to its owner). This default: refused.
     *
     * @param start first byte, at least 0, below the file system's size
     * @param length bytes, at least one block
     * @param minLength smallest free extent worth discarding, in bytes, at least 0
     * @return bytes discarded
     * @throws dev.iomap.api.InvalidRangeException for a range as above
     * @throws dev.iomap.api.NotSupportedException if the adapter cannot (this default)
     * @throws IOException on a device error ({@link dev.iomap.device.ReadOnlyDeviceException} on a
     *     read-only device)
     */
    default long trim(long start, long length, long minLength) throws IOException {
        throw new dev.iomap.api.NotSupportedException("this file system does not trim its free space");
    }

    /**
     * The adapter's own counters, for {@link dev.iomap.api.IoStats#adapterCounters()}: names such as
     * {@code "glock.acquisitions"} or {@code "journal.commits"} mapped to totals since mount. Cheap and
     * thread-safe; a snapshot. This default: none.
     *
     * @return the counters by name
     */
    default Map<String, Long> counters() {
        return Map.of();
    }

    /**
     * Whether the last close of an inode on this mount should evict it ({@link #evict}) rather than
     * release it ({@link FileOps#release}), although this mount did not unlink it: the kernel's
     * {@code drop_inode}, which looks at the link count the filesystem keeps up to date. A cluster adapter
     * answers true for an inode another node unlinked while it was open here. The core evicts the inodes
     * it unlinked itself without asking. Called under the core's namespace lock; must not wait for other
     * nodes. This default: false.
     *
     * @param inode the file whose last open file here is closing
     * @return whether it has no name left and is to be evicted
     */
    default boolean dropInode(IomapInode inode) {
        return false;
    }

    /**
     * The inode has no name and no open file left on this mount: free it and its blocks (a cluster
     * adapter frees them only once no other node has the inode open either). An inode another node
     * unlinked while it was open here comes here too if {@link #dropInode} said so.
     *
     * @param ino the inode
     * @throws IOException on a device error
     */
    void evict(long ino) throws IOException;

    /**
     * Makes everything durable (after the core wrote back every file).
     *
     * @throws IOException on a device error
     */
    void sync() throws IOException;

    /**
     * Makes everything durable and marks the image clean. The mount is unusable afterwards.
     *
     * @throws IOException on a device error
     */
    void unmount() throws IOException;
}
