package dev.iomap.core;

import dev.iomap.api.BlockDevice;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapInode;
import dev.iomap.api.IomapOps;
import dev.iomap.api.WriteOps;
import dev.iomap.api.WritebackOps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One file in an {@link IomapCache}: its page cache, in-memory size, inode lock and writeback error
 * sequence, and the adapter operations that map it.
 *
 * <p>Thread-safe. Writes and size changes take the inode lock exclusively (the kernel's
 * {@code i_rwsem}); reads take it shared; writeback takes only folio locks. Open it with
 * {@link #open()} to read and write.
 */
public final class CachedInode implements IomapInode {
    private final IomapCache cache;
    private final long ino;
    private final int blockSize;
    private final long maxFileSize;
    private final IomapOps ops;
    private final WritebackOps writebackOps;
    private final PageCache pageCache;
    private final ReentrantReadWriteLock inodeLock = new ReentrantReadWriteLock();
    private final WritebackError writebackError = new WritebackError();
    private final BufferedRead reader = new BufferedRead(this);
    private volatile long size;

    CachedInode(IomapCache cache, long ino, int blockSize, long size, long maxFileSize, IomapOps ops,
            WritebackOps writebackOps) {
        this.cache = cache;
        this.ino = ino;
        this.blockSize = blockSize;
        this.size = size;
        this.maxFileSize = maxFileSize;
        this.ops = ops;
        this.writebackOps = writebackOps;
        this.pageCache = new PageCache(cache.options(), blockSize, cache.statsCounters());
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
    public long maxFileSize() {
        return maxFileSize;
    }

    /** @return the folios of this file */
    public PageCache pageCache() {
        return pageCache;
    }

    /** @return this file's writeback errors */
    public WritebackError writebackError() {
        return writebackError;
    }

    /** @return a new open file over this inode, sampling the writeback error sequence now */
    public OpenFile open() {
        return new OpenFile(this, writebackError.sample());
    }

    /**
     * Buffered write of {@code length} bytes from {@code src} at {@code pos}.
     *
     * @param pos file offset, at least 0
     * @param src where the bytes come from
     * @param length bytes to write
     * @return bytes written: {@code length}, or fewer after a short copy
     * @throws InvalidRangeException if the range is negative or passes the largest file size
     * @throws IOException from the adapter or the device
     */
    public long write(long pos, CopySource src, long length) throws IOException {
        InvalidRangeException.checkRange("write to inode " + ino, pos, length, maxFileSize);
        if (length == 0) {
            return 0;
        }
        inodeLock.writeLock().lock();
        try {
            return new BufferedWrite(this).write(pos, src, length);
        } finally {
            inodeLock.writeLock().unlock();
        }
    }

    /**
     * Buffered read into {@code dst} from {@code pos}, up to EOF.
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go; its position advances
     * @return bytes read, or -1 if {@code pos} is at or past EOF
     * @throws InvalidRangeException if {@code pos} is negative
     * @throws IOException from the adapter or the device
     */
    public int read(long pos, ByteBuffer dst) throws IOException {
        InvalidRangeException.checkRange("read from inode " + ino, pos, 0, Long.MAX_VALUE);
        inodeLock.readLock().lock();
        try {
            return reader.read(pos, dst);
        } finally {
            inodeLock.readLock().unlock();
        }
    }

    /**
     * Starts writeback of the dirty data in {@code [start, end)} without waiting for it.
     *
     * @param start first byte
     * @param end first byte past the range
     * @param sync whether folios already under writeback are waited for and written again
     */
    public void writeback(long start, long end, boolean sync) {
        new Writeback(this).writepages(start, end, sync);
    }

    /**
     * Writes back {@code [start, end)} and waits until the device has it (not yet flushed).
     *
     * @param start first byte
     * @param end first byte past the range
     */
    public void writeAndWait(long start, long end) {
        Writeback writeback = new Writeback(this);
        writeback.writepages(start, end, true);
        writeback.waitWriteback(start, end);
    }

    void extendSize(long newEnd) {
        if (newEnd > size) {
            size = newEnd;
        }
    }

    IomapOps ops() {
        return ops;
    }

    WriteOps writeOps() {
        return ops.writeOps();
    }

    WritebackOps writebackOps() {
        return writebackOps;
    }

    BlockDevice device() {
        return cache.device();
    }

    CacheStats stats() {
        return cache.statsCounters();
    }

    java.util.concurrent.Executor completionExecutor() {
        return cache.completionExecutor();
    }

    BufferedRead reader() {
        return reader;
    }

    @Override
    public String toString() {
        return "CachedInode[ino=" + ino + ", size=" + size + "]";
    }
}
