package dev.iomap.spi;

/**
 * The adapter's side of one mount: its geometry and the operation tables the core calls, in the
 * kernel's manner: {@link SuperOps} ({@code super_operations}), {@link InodeOps}
 * ({@code inode_operations}: namespace and attributes), {@link FileOps} ({@code file_operations}: an
 * open file's data and life), {@link XattrOps} (the {@code xattr_handler}s), and the address-space
 * tables {@link IomapOps} and {@link WritebackOps}. The core resolves paths, holds the page cache and
 * the inode locks, and calls the tables; the adapter never sees the cache except through
 * {@link IomapInode}.
 *
 * <p>The core asks for each table once, right after {@link FileSystemAdapter#mount}, and keeps it for
 * the life of the mount: every accessor returns the same object each time. An adapter implements each
 * table in the class that owns that state (its namespace code as the {@link InodeOps}, its journal or
 * superblock as the {@link SuperOps}), or one class implements several and returns itself. Every
 * table is thread-safe; {@link #iomapOps()} and {@link #writebackOps()} are called from many threads at
 * once (writeback runs without the inode lock).
 */
public interface MountedFileSystem {

    /** @return the filesystem block size */
    int blockSize();

    /** @return the root directory's inode number */
    long rootIno();

    /** @return the largest file size the format allows */
    long maxFileSize();

    /**
     * What atomic writes the mount's regular files take (the kernel's per-inode
     * {@code xfs_get_atomic_write_min/max}, reported by {@code statx}), read once at mount. Asked only
     * of an adapter declaring {@link dev.iomap.api.Capability#ATOMIC_WRITES}; the unit min must be a
     * multiple of {@link #blockSize()} (atomic writes are direct I/O). This default: none.
     *
     * @return the limits, {@link dev.iomap.api.AtomicWriteLimits#NONE} if there are none
     */
    default dev.iomap.api.AtomicWriteLimits atomicWriteLimits() {
        return dev.iomap.api.AtomicWriteLimits.NONE;
    }

    /** @return the whole-filesystem operations: statfs, sync, unmount, evict */
    SuperOps superOps();

    /** @return the namespace and attribute operations */
    InodeOps inodeOps();

    /** @return the operations on an open file's data and life */
    FileOps fileOps();

    /** @return the extended-attribute operations; this default: {@link XattrOps#NONE} */
    default XattrOps xattrOps() {
        return XattrOps.NONE;
    }

    /** @return how the core maps file ranges of this mount's inodes */
    IomapOps iomapOps();

    /** @return how this mount takes part in writeback */
    WritebackOps writebackOps();
}
