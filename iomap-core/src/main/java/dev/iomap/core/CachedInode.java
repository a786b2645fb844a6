package dev.iomap.core;

import dev.iomap.core.mm.CacheStats;
import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.FolioState;
import dev.iomap.core.mm.PageCache;
import dev.iomap.core.mm.ReadaheadPool;
import dev.iomap.core.mm.ReadaheadState;
import dev.iomap.core.mm.WritebackError;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.DelallocPunch;
import dev.iomap.spi.DirtyCacheException;
import dev.iomap.api.FileExtent;
import dev.iomap.api.FileFlag;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.WriteOps;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One file in an {@link IomapCache}: its page cache, in-memory size, inode lock and writeback error
 * sequence, and the adapter operations that map it.
 *
 * <p>Thread-safe. Writes and size changes take the inode lock exclusively (the kernel's
 * {@code i_rwsem}); reads take it shared; writeback takes only folio locks. Open it with
 * {@link #open()} to read and write.
 */
public final class CachedInode extends IomapContext {
    private final IomapCache cache;
    private final long ino;
    private final int blockSize;
    private final long maxFileSize;
    private final IomapOps ops;
    private final WritebackOps writebackOps;
    private final PageCache pageCache;
    private final ReentrantReadWriteLock inodeLock = new ReentrantReadWriteLock();
    /** The inode's flags as the file system last read or set them (see {@link #fileFlags()}). */
    private volatile Set<FileFlag> fileFlags = Set.of();
    /** Taken by each writeback pass of an inode whose adapter wants file order. */
    private final ReentrantLock writebackOrder = new ReentrantLock();
    private final WritebackError writebackError = new WritebackError();
    private final BufferedRead reader = new BufferedRead(this);
    /** The buffered writer, reused under the inode lock held exclusively (no allocation per write). */
    private final BufferedWrite writer = new BufferedWrite(this);
    /** The readahead state of reads made without an {@link OpenFile} ({@link #read(long, ByteBuffer)}). */
    private final ReadaheadState inodeReadahead = new ReadaheadState();
    private volatile long size;
    /** {@link System#nanoTime()} when the write times were last set for a write; see {@link #timesDue}. */
    private volatile long timesSetAt;
    private volatile boolean timesSet;

    CachedInode(IomapCache cache, long ino, int blockSize, long size, long maxFileSize, IomapOps ops,
            WritebackOps writebackOps) {
        this.cache = cache;
        this.ino = ino;
        this.blockSize = blockSize;
        this.size = size;
        this.maxFileSize = maxFileSize;
        this.ops = ops;
        this.writebackOps = writebackOps;
        this.pageCache = new PageCache(cache.options(), blockSize, cache.statsCounters(), cache.folioMemory(),
                cache.folioLru(),
                incoming -> cache.reclaim().ifOverBudget(incoming), cache::reclaimForAllocation);
        this.pageCache.host(this);
        this.pageCache.aops(new IomapAddressSpaceOps(this));
        this.pageCache.onDirty(() -> cache.inodeDirtied(this));
    }

    /**
     * Whether a write starting at {@code now} should set the file's mtime and ctime: not within
     * {@code intervalNanos} of the last time it did (coarse timestamps, as the kernel's clock tick
     * gives). Records {@code now} when it answers yes. Two racing writers may both be told yes, which
     * only sets the times twice.
     *
     * @param now {@link System#nanoTime()}
     * @param intervalNanos the granularity
     * @return whether to set the times
     */
    public boolean timesDue(long now, long intervalNanos) {
        if (timesSet && now - timesSetAt < intervalNanos) {
            return false;
        }
        timesSetAt = now;
        timesSet = true;
        return true;
    }

    /** The times were changed explicitly ({@code utimensat}): the next write sets them again. */
    public void forgetTimesSet() {
        timesSet = false;
    }

    @Override
    public long ino() {
        return ino;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    /** @return the largest size this file may reach */
    @Override
    public long maxFileSize() {
        return maxFileSize;
    }

    /** @return the folios of this file */
    @Override
    public PageCache pageCache() {
        return pageCache;
    }

    /** @return this file's writeback errors */
    @Override
    public WritebackError writebackError() {
        return writebackError;
    }

    /**
     * @return a new open file over this inode, sampling the writeback error sequence now (the kernel's
     *     {@code filemap_sample_wb_err} at open)
     */
    public OpenFile open() {
        return new OpenFile(this, writebackError.sample());
    }

    /**
     * Buffered write of {@code length} bytes from {@code src} at {@code pos}, under the inode lock (the
     * kernel's {@code iomap_file_buffered_write} as a filesystem's {@code write_iter} calls it).
     *
     * @param pos file offset, at least 0
     * @param src where the bytes come from
     * @param length bytes to write
     * @return bytes written: {@code length}, or fewer after a short copy
     * @throws InvalidRangeException if the range is negative or passes the largest file size
     * @throws IOException from the adapter or the device
     */
    public long write(long pos, CopySource src, long length) throws IOException {
        return write(pos, src, length, false);
    }

    /**
     * As {@link #write(long, CopySource, long)}; an {@code uncached} write ({@code RWF_DONTCACHE})
     * marks the folios it brings into the cache drop-behind and starts their writeback before it
     * returns, without waiting for it (the kernel's {@code generic_write_sync} for
     * {@code IOCB_DONTCACHE}, {@code filemap_fdatawrite_range_kick}): each leaves the cache when its
     * writeback ends, unless it was dirtied again. Folios cached before the write stay cached.
     *
     * @param pos file offset, at least 0
     * @param src where the bytes come from
     * @param length bytes to write
     * @param uncached whether the write is uncached
     * @return bytes written: {@code length}, or fewer after a short copy
     * @throws InvalidRangeException if the range is negative or passes the largest file size
     * @throws IOException from the adapter or the device
     */
    public long write(long pos, CopySource src, long length, boolean uncached) throws IOException {
        long written = writeLocked(pos, src, length, uncached);
        if (uncached && written > 0) {
            new Writeback(this).writepages(pos, pos + written, false);
        }
        return written;
    }

    private long writeLocked(long pos, CopySource src, long length, boolean uncached) throws IOException {
        if (pos < 0 || length < 0 || pos + length < 0 || pos + length > maxFileSize) {
            // the message is built only for a bad range: this is every write's hot path
            InvalidRangeException.checkRange("write to inode " + ino, pos, length, maxFileSize);
        }
        if (length == 0) {
            return 0;
        }
        inodeLock.writeLock().lock();
        try {
            return writer.write(pos, src, length, uncached);
        } finally {
            inodeLock.writeLock().unlock();
        }
    }

    /**
     * Buffered read into {@code dst} from {@code pos}, up to EOF (the kernel's {@code filemap_read}).
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go; its position advances
     * @return bytes read, or -1 if {@code pos} is at or past EOF
     * @throws InvalidRangeException if {@code pos} is negative
     * @throws IOException from the adapter or the device
     */
    public int read(long pos, ByteBuffer dst) throws IOException {
        return read(pos, dst, inodeReadahead);
    }

    /**
     * Buffered read into {@code dst} from {@code pos}, up to EOF, reading ahead as {@code ra} says
     * (the kernel's {@code filemap_read} with the file's {@code file_ra_state}).
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go; its position advances
     * @param ra the open file's readahead state
     * @return bytes read, or -1 if {@code pos} is at or past EOF
     * @throws InvalidRangeException if {@code pos} is negative
     * @throws IOException from the adapter or the device
     */
    public int read(long pos, ByteBuffer dst, ReadaheadState ra) throws IOException {
        return read(pos, dst, ra, false);
    }

    /**
     * As {@link #read(long, ByteBuffer, ReadaheadState)}; an {@code uncached} read
     * ({@code RWF_DONTCACHE}) reads no further ahead than it copies, and the folios it brings into the
     * cache leave it as soon as it has copied from them (the kernel's {@code filemap_read} with
     * {@code IOCB_DONTCACHE}); folios cached before it stay cached.
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go; its position advances
     * @param ra the open file's readahead state
     * @param uncached whether the read is uncached
     * @return bytes read, or -1 if {@code pos} is at or past EOF
     * @throws InvalidRangeException if {@code pos} is negative
     * @throws IOException from the adapter or the device
     */
    public int read(long pos, ByteBuffer dst, ReadaheadState ra, boolean uncached) throws IOException {
        if (pos < 0) {
            // the message is built only for a bad offset: this is every read's hot path
            InvalidRangeException.checkRange("read from inode " + ino, pos, 0, Long.MAX_VALUE);
        }
        inodeLock.readLock().lock();
        try {
            return reader.read(pos, dst, ra, uncached);
        } finally {
            inodeLock.readLock().unlock();
        }
    }

    /**
     * The first offset at or after {@code pos} holding data, under the inode lock held shared (the
     * kernel's {@code iomap_seek_data}, as a filesystem's {@code llseek} calls it for
     * {@code SEEK_DATA}); see {@link Seek} for what counts as data.
     *
     * @param pos file offset, at least 0
     * @return {@code pos} if it is in data, else the start of the next data
     * @throws InvalidRangeException if {@code pos} is negative
     * @throws dev.iomap.api.NoDataException if {@code pos} is at or past EOF, or only holes follow it
     * @throws IOException from the adapter
     */
    public long seekData(long pos) throws IOException {
        InvalidRangeException.checkRange("seek data in inode " + ino, pos, 0, Long.MAX_VALUE);
        inodeLock.readLock().lock();
        try {
            return Seek.seekData(this, pos);
        } finally {
            inodeLock.readLock().unlock();
        }
    }

    /**
     * The first offset at or after {@code pos} in a hole, EOF being one, under the inode lock held
     * shared (the kernel's {@code iomap_seek_hole}, as a filesystem's {@code llseek} calls it for
     * {@code SEEK_HOLE}); see {@link Seek} for what counts as data.
     *
     * @param pos file offset, at least 0
     * @return {@code pos} if it is in a hole, else the start of the next hole, at most the size
     * @throws InvalidRangeException if {@code pos} is negative
     * @throws dev.iomap.api.NoDataException if {@code pos} is at or past EOF
     * @throws IOException from the adapter
     */
    public long seekHole(long pos) throws IOException {
        InvalidRangeException.checkRange("seek hole in inode " + ino, pos, 0, Long.MAX_VALUE);
        inodeLock.readLock().lock();
        try {
            return Seek.seekHole(this, pos);
        } finally {
            inodeLock.readLock().unlock();
        }
    }

    /**
     * The extents holding data in {@code [pos, pos + length)}, clamped to the size rounded up to a
     * block, under the inode lock held shared (the kernel's {@code iomap_fiemap}, as a filesystem's
     * {@code fiemap} calls it); see {@link Fiemap} for what is reported.
     *
     * @param pos first byte, at least 0
     * @param length bytes, at least 0 (past {@code Long.MAX_VALUE} means to EOF)
     * @param sync whether to write the whole file back and wait first ({@code FIEMAP_FLAG_SYNC})
     * @return the extents in file order, the last with {@code LAST}
     * @throws InvalidRangeException for a negative offset or length
     * @throws IOException from the adapter
     */
    public List<FileExtent> fiemap(long pos, long length, boolean sync) throws IOException {
        InvalidRangeException.checkRange("fiemap of inode " + ino, pos, Math.min(length, Long.MAX_VALUE - pos),
                Long.MAX_VALUE);
        if (sync) {
            writeAndWait(0, Long.MAX_VALUE);
        }
        inodeLock.readLock().lock();
        try {
            long eof = size();
            long blockEnd = eof + blockSize() - 1 - (eof + blockSize() - 1) % blockSize();
            long end = Math.min(blockEnd, pos + Math.min(length, Long.MAX_VALUE - pos));
            return Fiemap.map(this, pos, end);
        } finally {
            inodeLock.readLock().unlock();
        }
    }

    /**
     * Zeroes {@code [pos, pos + length)}: holes and unwritten extents are skipped (after writing back
     * any dirty cache over the range), mapped and delalloc blocks are zeroed through the cache (the
     * kernel's {@code iomap_zero_range}).
     *
     * @param pos first byte, at least 0
     * @param length bytes
     * @throws InvalidRangeException for a negative or overflowing range
     * @throws IOException from the adapter or the device
     */
    public void zeroRange(long pos, long length) throws IOException {
        InvalidRangeException.checkRange("zero range of inode " + ino, pos, length, maxFileSize);
        inodeLock.writeLock().lock();
        try {
            new BufferedWrite(this).zeroRange(pos, length);
        } finally {
            inodeLock.writeLock().unlock();
        }
    }

    /**
     * Unshares {@code [pos, pos + length)}: every block the adapter maps as {@code SHARED} is read,
     * even whole folios, and dirtied so writeback copies it to the adapter's private destination (the
     * kernel's {@code iomap_file_unshare}).
     *
     * @param pos first byte, at least 0
     * @param length bytes
     * @throws InvalidRangeException for a negative or overflowing range
     * @throws IOException from the adapter or the device
     */
    public void unshare(long pos, long length) throws IOException {
        InvalidRangeException.checkRange("unshare of inode " + ino, pos, length, maxFileSize);
        inodeLock.writeLock().lock();
        try {
            long end = Math.min(pos + length, size);
            if (end > pos) {
                new BufferedWrite(this).unshare(pos, end - pos);
            }
        } finally {
            inodeLock.writeLock().unlock();
        }
    }

    /**
     * Changes the file size. Shrinking zeroes the tail of the new last block (the kernel's
     * {@code iomap_truncate_page}), then drops the folios past the new size and zeroes and
     * partially invalidates the one straddling it ({@code truncate_setsize}). Growing zeroes the
     * blocks between the old and new size that are mapped (so stale device data never shows).
     * {@code whileLocked} then runs with the inode lock still held: the adapter frees or reserves its
     * blocks there.
     *
     * @param newSize the new size, at least 0
     * @param whileLocked the adapter's part, run last under the inode lock; may be null
     * @throws InvalidRangeException if {@code newSize} is negative or too large
     * @throws IOException from the adapter or the device
     */
    public void truncate(long newSize, IoRunnable whileLocked) throws IOException {
        truncate(newSize, Long.MAX_VALUE, whileLocked);
    }

    /**
     * {@link #truncate(long, IoRunnable)}, but growing zeroes mapped blocks only below
     * {@code zeroEnd} (and always the rest of the old last page): what fallocate's size change needs,
     * since the range it just preallocated reads as zeros already, as unwritten extents or as blocks
     * the adapter zeroed (GFS2 has no unwritten state). Zeroing those again through the cache would
     * rewrite every preallocated byte as dirty folios.
     *
     * @param newSize the new size, at least 0
     * @param zeroEnd where the zeroing of a growing file stops, at most at {@code newSize}
     * @param whileLocked the adapter's part, run last under the inode lock; may be null
     * @throws InvalidRangeException if {@code newSize} is negative or too large
     * @throws IOException from the adapter or the device
     */
    public void truncate(long newSize, long zeroEnd, IoRunnable whileLocked) throws IOException {
        InvalidRangeException.checkRange("truncate of inode " + ino, newSize, 0, maxFileSize);
        inodeLock.writeLock().lock();
        try {
            long oldSize = size;
            BufferedWrite zeroer = new BufferedWrite(this);
            if (newSize < oldSize) {
                long blockEnd = (newSize + blockSize - 1) & -blockSize;
                zeroer.zeroRange(newSize, Math.min(blockEnd, oldSize) - newSize);
                size = newSize;
                Invalidate.truncatePagecache(this, newSize);
            } else if (newSize > oldSize) {
                // The rest of the old last page always: a mapped store may have left bytes past EOF there.
                long unit = Math.max(blockSize, 1L << pageCache.pageShift());
                long oldPageEnd = (oldSize + unit - 1) & -unit;
                long stop = Math.min(newSize, Math.max(zeroEnd, oldPageEnd));
                if (stop > oldSize) {
                    zeroer.zeroRange(oldSize, stop - oldSize);
                }
                size = newSize;
            }
            if (whileLocked != null) {
                whileLocked.run();
            }
        } finally {
            inodeLock.writeLock().unlock();
        }
    }

    /**
     * Drops the cache over {@code [start, end)} after writing back what is dirty there and waiting for
     * it (what a filesystem does before punching a hole or cloning a range: the kernel's
     * {@code filemap_write_and_wait_range} then {@code truncate_pagecache_range}). A folio straddling an
     * edge is dropped whole once clean (the bytes outside the range are on the device and are read
     * again); one dirtied again meanwhile has only the range zeroed and invalidated.
     *
     * @param start first byte
     * @param end first byte past the range
     */
    public void flushAndInvalidate(long start, long end) {
        writeAndWait(start, end);
        Invalidate.invalidateRange(this, start, end);
    }

    /** {@inheritDoc} Done by {@code Invalidate.dropCleanFolios}. */
    @Override
    public void refreshSize(long newSize) {
        if (newSize < 0) {
            throw new IllegalArgumentException("size " + newSize + " of inode " + ino + " is negative");
        }
        size = newSize;
    }

    @Override
    public long invalidateCache() {
        Invalidate.CacheDrop drop = Invalidate.dropCleanFolios(this);
        if (drop.dirtyPages() > 0) {
            throw new DirtyCacheException(ino, drop.dirtyPages(), drop.firstDirtyOffset());
        }
        return drop.droppedPages();
    }

    /**
     * Runs {@code action} with the inode lock held exclusively (reentrant: the action may call the
     * other methods of this inode).
     *
     * @param action the work
     * @throws IOException from the action
     */
    public void withExclusiveLock(IoRunnable action) throws IOException {
        inodeLock.writeLock().lock();
        try {
            action.run();
        } finally {
            inodeLock.writeLock().unlock();
        }
    }

    /**
     * Drops every folio of the file without writing anything back (the file is being deleted),
     * after waiting for writeback in flight (the kernel's {@code truncate_inode_pages_final}).
     */
    public void discardCache() {
        inodeLock.writeLock().lock();
        try {
            Invalidate.truncatePagecache(this, 0);
        } finally {
            inodeLock.writeLock().unlock();
        }
    }

    /**
     * A shared writable mapping of this file.
     *
     * @return the mapped region
     */
    public MappedRegion map() {
        return new MappedRegion(this);
    }

    /**
     * Marks every block of the folio at {@code pos} dirty, creating its per-block state if missing
     * (the kernel's {@code iomap_dirty_folio}). Does nothing if the page is not cached.
     *
     * @param pos a file offset inside the folio
     * @return whether a cached folio was dirtied
     */
    public boolean dirtyFolio(long pos) {
        Folio folio = pageCache.lookup(pos >>> pageCache.pageShift());
        if (folio == null) {
            return false;
        }
        folio.lock();
        try {
            if (folio.isRemoved() || !folio.isUptodate()) {
                return false;
            }
            FolioState state = folio.stateForUpdate();
            if (state != null) {
                state.setRangeDirty(0, folio.size());
            }
            folio.markDirty();
            return true;
        } finally {
            folio.unlock();
        }
    }

    /** {@inheritDoc} Done by {@code DelallocRelease} (the kernel's {@code iomap_write_delalloc_release}). */
    @Override
    public void releaseDelalloc(long pos, long length, long written, DelallocPunch punch) throws IOException {
        new DelallocRelease(this).release(pos, length, written, punch);
    }

    /**
     * Starts writeback of the dirty data in {@code [start, end)} without waiting for it (the kernel's
     * {@code filemap_fdatawrite_range}, which ends in the filesystem's {@code iomap_writepages}).
     *
     * @param start first byte
     * @param end first byte past the range
     * @param sync whether folios already under writeback are waited for and written again
     */
    public void writeback(long start, long end, boolean sync) {
        new Writeback(this).writepages(start, end, sync);
    }

    /**
     * Writes back {@code [start, end)} and waits until the device has it, not yet flushed (the
     * kernel's {@code filemap_write_and_wait_range}).
     *
     * @param start first byte
     * @param end first byte past the range
     */
    @Override
    public void writeAndWait(long start, long end) {
        Writeback writeback = new Writeback(this);
        writeback.writepages(start, end, true);
        writeback.waitWriteback(start, end);
    }

    /**
     * Throttles the calling writer while the cache holds more dirty data than its hard limit (the
     * kernel's {@code balance_dirty_pages_ratelimited}).
     */
    @Override
    void balanceDirty() {
        cache.balanceDirty(this);
    }

    @Override
    void lockShared() {
        inodeLock.readLock().lock();
    }

    /**
     * Takes the inode lock shared only if no writer holds it, even ahead of waiting writers: what
     * background readahead does, which must never wait for a writer that may wait for its reader.
     *
     * @return whether the lock was taken
     */
    @Override
    boolean tryLockShared() {
        return inodeLock.readLock().tryLock();
    }

    @Override
    void lockExclusive() {
        inodeLock.writeLock().lock();
    }

    @Override
    void unlockExclusive() {
        inodeLock.writeLock().unlock();
    }

    @Override
    void unlockShared() {
        inodeLock.readLock().unlock();
    }

    @Override
    public void shrinkSizeAfterLostWrite(long deviceSize) {
        if (deviceSize < size) {
            size = Math.max(0, deviceSize);
        }
    }

    /** Raises the in-memory size to {@code newEnd} if it is larger (the kernel's {@code i_size_write}). */
    @Override
    void extendSize(long newEnd) {
        if (newEnd > size) {
            size = newEnd;
        }
    }

    @Override
    IomapOps ops() {
        return ops;
    }

    @Override
    WriteOps writeOps() {
        return ops.writeOps();
    }

    @Override
    WritebackOps writebackOps() {
        return writebackOps;
    }

    @Override
    ReentrantLock writebackOrder() {
        return writebackOrder;
    }

    @Override
    BlockDevice device() {
        return cache.device();
    }

    @Override
    CacheStats stats() {
        return cache.statsCounters();
    }

    @Override
    java.util.concurrent.Executor completionExecutor() {
        return cache.completionExecutor();
    }

    /** Reports an {@link OutOfMemoryError} of this inode's writeback to the cache ({@link IomapCache#onOutOfMemory}). */
    @Override
    void outOfMemory(OutOfMemoryError error) {
        cache.outOfMemory(error);
    }

    @Override
    BufferedRead reader() {
        return reader;
    }

    @Override
    ReadaheadPool readaheadPool() {
        return cache.readaheadPool();
    }

    @Override
    public String toString() {
        return "CachedInode[ino=" + ino + ", size=" + size + "]";
    }

    /**
     * @return the inode's flags ({@link FileFlag#IMMUTABLE}, {@link FileFlag#APPEND}, {@link FileFlag#SYNC}
     *     are what writes through an open file obey), as read at the latest open or set through this mount
     *     since; empty for an adapter that keeps none
     */
    public Set<FileFlag> fileFlags() {
        return fileFlags;
    }

    /**
     * Records the inode's flags, read from the adapter or just set through it.
     *
     * @param flags the complete set
     */
    public void fileFlags(Set<FileFlag> flags) {
        this.fileFlags = Set.copyOf(flags);
    }
}
