package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.PageCache;
import dev.iomap.core.trace.DioInvalidateFailEvent;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.WritebackOps;

/**
 * What the direct I/O path ({@code dev.iomap.core.dio}) needs of a {@link CachedInode} beyond its
 * public methods: its inode lock, adapter operations, device, counters and in-memory size. Kept in
 * this package so that the cache's internals stay package-private; used by nothing else.
 *
 * <p>Thread-safe as the inode is; the lock methods follow {@link java.util.concurrent.locks.ReadWriteLock}'s
 * rules (each lock paired with its unlock on the same thread).
 */
public final class DirectIoAccess {
    private final CachedInode inode;

    /** @param inode the file */
    public DirectIoAccess(CachedInode inode) {
        this.inode = inode;
    }

    /** @return the file */
    public CachedInode inode() {
        return inode;
    }

    /** Takes the inode lock shared (the kernel's {@code inode_lock_shared}). */
    public void lockShared() {
        inode.lockShared();
    }

    /** Releases the shared inode lock. */
    public void unlockShared() {
        inode.unlockShared();
    }

    /** Takes the inode lock exclusively (reentrant). */
    public void lockExclusive() {
        inode.lockExclusive();
    }

    /** Releases the exclusive inode lock. */
    public void unlockExclusive() {
        inode.unlockExclusive();
    }

    /** @return the adapter's mapping operations */
    public IomapOps ops() {
        return inode.ops();
    }

    /** @return the adapter's writeback operations (submission and completion of direct writes too) */
    public WritebackOps writebackOps() {
        return inode.writebackOps();
    }

    /** @return the device the filesystem is on */
    public BlockDevice device() {
        return inode.device();
    }

    /**
     * Raises the in-memory size to {@code newEnd} if it is larger.
     *
     * @param newEnd a file offset
     */
    public void extendSize(long newEnd) {
        inode.extendSize(newEnd);
    }

    /**
     * Counts bytes the application wrote, for the write amplification.
     *
     * @param bytes bytes
     */
    public void countWritten(long bytes) {
        inode.stats().appWritten(bytes);
    }

    /**
     * Counts bytes the application read.
     *
     * @param bytes bytes
     */
    public void countRead(long bytes) {
        inode.stats().appRead(bytes);
    }

    /**
     * Drops the clean folios over {@code [start, end)} after waiting for their writeback; dirty ones
     * stay (dirtied meanwhile by a mapped store: their data is newer). The kernel's
     * {@code invalidate_inode_pages2_range} after a direct write, which likewise leaves a folio it
     * cannot drop. Takes folio locks only.
     *
     * @param start first byte
     * @param end first byte past the range
     * @return how many folios were dropped
     */
    public int dropCleanRange(long start, long end) {
        PageCache cache = inode.pageCache();
        if (end <= start) {
            return 0;
        }
        int dropped = 0;
        for (Folio folio : cache.foliosIn(start >>> cache.pageShift(), (end - 1) >>> cache.pageShift())) {
            folio.lock();
            try {
                if (folio.isRemoved()) {
                    continue;
                }
                folio.waitWriteback();
                if (!folio.isDirty()) {
                    Invalidate.invalidateFolio(folio, 0, folio.size());
                    cache.remove(folio);
                    dropped++;
                } else {
                    DioInvalidateFailEvent.emit(inode, folio.pos(), folio.size());
                }
            } finally {
                folio.unlock();
            }
        }
        return dropped;
    }

    /**
     * Writes back the dirty cache that must reach the device before a direct I/O over
     * {@code [start, end)} and waits for it: the range, or everything before {@code end} for a file
     * whose writeback goes in file order (a sequential zone: its write pointer must pass the buffered
     * data first).
     *
     * @param start first byte
     * @param end first byte past the range
     */
    public void writeAndWaitBefore(long start, long end) {
        boolean ordered = inode.writebackOps().writesInFileOrder(inode);
        inode.writeAndWait(ordered ? 0 : start, end);
    }

    /** @return whether the file's writeback must go in file order */
    public boolean writesInFileOrder() {
        return inode.writebackOps().writesInFileOrder(inode);
    }
}
