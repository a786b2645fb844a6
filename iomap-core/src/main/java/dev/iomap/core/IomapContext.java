package dev.iomap.core;

import dev.iomap.core.mm.CacheStats;
import dev.iomap.core.mm.PageCache;
import dev.iomap.core.mm.ReadaheadPool;
import dev.iomap.core.mm.WritebackError;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.WriteOps;
import dev.iomap.spi.WritebackOps;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the iomap paths ({@link IomapIter}, {@link BufferedRead}, {@link BufferedWrite},
 * {@link Writeback}, {@link Readahead}, {@link Seek}, {@link Fiemap}, {@link Invalidate},
 * {@link DelallocRelease}, {@link MappedRegion}) see of one file: the kernel's {@code struct inode}
 * with its {@code i_mapping}, as {@code iomap_iter} and the writeback context carry it. The paths
 * take this type and never name {@link CachedInode}, the subclass that holds the file's entry points
 * (the operations a filesystem's {@code file_operations} call, with their locking) and stands above
 * the paths. The constructor is package-private: no other subclass exists outside this package.
 *
 * <p>Thread-safety is {@link CachedInode}'s: the size is read without a lock, changes to it are
 * made under the inode lock held exclusively.
 */
public abstract class IomapContext implements IomapInode {

    IomapContext() {
    }

    /** @return the file's folios, by page index (the kernel's {@code inode->i_mapping}) */
    public abstract PageCache pageCache();

    /** @return the file's writeback errors (the mapping's {@code wb_err}) */
    public abstract WritebackError writebackError();

    /** @return the largest size this file may reach */
    public abstract long maxFileSize();

    /** @return how the adapter maps the file */
    abstract IomapOps ops();

    /** @return the adapter's buffered-write hooks ({@code ops().writeOps()}) */
    abstract WriteOps writeOps();

    /** @return how the adapter takes part in writeback */
    abstract WritebackOps writebackOps();

    /** @return taken by each writeback pass of a file whose adapter wants file order */
    abstract ReentrantLock writebackOrder();

    /** @return the device holding the file's blocks */
    abstract BlockDevice device();

    /** @return the counters of the cache the file is in */
    abstract CacheStats stats();

    /** @return where ioends that completed asynchronously run their completion work */
    abstract Executor completionExecutor();

    /** @return where background readahead of the file runs */
    abstract ReadaheadPool readaheadPool();

    /** @return the file's buffered reader, which reads folios and blocks through the adapter's mappings */
    abstract BufferedRead reader();

    /**
     * Reports an {@link OutOfMemoryError} of this file's background work to its cache.
     *
     * @param error the error met
     */
    abstract void outOfMemory(OutOfMemoryError error);

    /**
     * Raises the in-memory size to {@code newEnd} if it is larger (the kernel's {@code i_size_write});
     * the caller holds the inode lock exclusively.
     *
     * @param newEnd the end of what was written
     */
    abstract void extendSize(long newEnd);

    /**
     * Throttles the calling writer while the cache holds more dirty data than its hard limit (the
     * kernel's {@code balance_dirty_pages_ratelimited}).
     */
    abstract void balanceDirty();

    /** Takes the inode lock shared (the kernel's {@code inode_lock_shared}). */
    abstract void lockShared();

    /**
     * Takes the inode lock shared only if no writer holds it, even ahead of waiting writers.
     *
     * @return whether the lock was taken
     */
    abstract boolean tryLockShared();

    /** Releases the inode lock taken shared. */
    abstract void unlockShared();

    /** Takes the inode lock exclusively (the kernel's {@code inode_lock}). */
    abstract void lockExclusive();

    /** Releases the inode lock taken exclusively. */
    abstract void unlockExclusive();
}
