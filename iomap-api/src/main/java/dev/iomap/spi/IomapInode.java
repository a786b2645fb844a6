package dev.iomap.spi;

import java.io.IOException;

/**
 * The core's view of one file, handed to every adapter callback, and what an adapter may ask of the
 * core's page cache for it. Implemented by the core only; adapters call it and never implement it.
 *
 * <p>Thread-safe. {@link #size()} is the in-memory size ({@code i_size}), which buffered writes raise
 * before writeback; an adapter keeps its own on-disk size and updates it at I/O completion.
 */
public interface IomapInode {

    /** @return the inode number, unique within one mounted filesystem */
    long ino();

    /** @return the in-memory file size in bytes */
    long size();

    /** @return the filesystem block size in bytes, a power of two */
    int blockSize();

    /**
     * Releases the delayed-allocation reservation of the part of a write that did not happen: the
     * kernel's {@code iomap_write_delalloc_release} from {@code iomap_last_written_block} on (older
     * kernels exported both as {@code iomap_file_buffered_write_punch_delalloc}). An adapter calls it
     * from {@link IomapOps#end} when {@code written < length} over a {@link IomapType#DELALLOC} mapping.
     *
     * <p>The range from the first block the write did not reach ({@code pos} rounded down when
     * nothing was written, else {@code pos + written} rounded up) to {@code pos + length} rounded up
     * is scanned in the page cache: {@code punch} is called for every run of blocks that has no dirty
     * cache, and never for a dirty block (its data, written earlier, still needs the reservation).
     * All arithmetic is 64-bit. Caller holds the inode lock (it is inside a write).
     *
     * @param pos the {@code pos} of the mapping given to {@link IomapOps#end}
     * @param length the {@code length} given to {@link IomapOps#end}
     * @param written the bytes written
     * @param punch releases one clean range
     * @throws IOException from {@code punch}
     */
    void releaseDelalloc(long pos, long length, long written, DelallocPunch punch) throws IOException;

    /**
     * Writes back the dirty cache of {@code [start, end)} and waits until the device has it (not yet
     * flushed): the kernel's {@code filemap_write_and_wait_range}. A zone file needs it before the
     * zone is finished; a cluster lock's demotion needs it before another node may read. May be called
     * with the inode lock held (from {@link FileOps#setSize}); must not be called from an
     * ioend completion. Writeback errors go where every writeback error goes: the next fsync.
     *
     * @param start first byte
     * @param end first byte past the range
     */
    void writeAndWait(long start, long end);

    /**
     * Drops every cached folio of the file, after waiting for the writeback in flight of each: the
     * invalidation step of a cluster lock's demotion ({@code go_inval} of a GFS2 inode glock, which
     * calls the kernel's {@code truncate_inode_pages}). It writes nothing back: the caller has written
     * the file back first ({@link #writeAndWait} in {@code go_sync}), so a folio still dirty here was
     * dirtied after that, by a use the lock should have excluded. Such a folio is kept, not dropped
     * (its data is not lost), the clean ones are dropped, and the method throws
     * {@link DirtyCacheException}. The file's size is unchanged, and the next read comes from the
     * device.
     *
     * <p>Takes folio locks only, never the inode lock, as memory reclaim does: an adapter takes its
     * glock inside the inode lock (GFS2 takes it inside {@code i_rwsem}), so a demotion run for another
     * node must not wait for this inode's lock. Keeping this node's readers and writers out meanwhile
     * is the lock being demoted's job; a read that runs anyway (a caller's bug) caches the folio again
     * from the device, and a write dirties one, which the next call reports.
     *
     * <p>The core's inode implements it; the default, there only so that stand-ins of this interface
     * in tests need not, refuses.
     *
     * @return how many pages (of the cache's page size) were dropped
     * @throws DirtyCacheException if dirty folios were found and kept
     * @throws UnsupportedOperationException from the default, in an implementation without a cache
     */
    default long invalidateCache() {
        throw new UnsupportedOperationException(getClass().getName() + " has no page cache to invalidate");
    }

    /**
     * Lowers the in-memory size to what the device really holds after writes were lost; does nothing
     * if the size is already at or below it (zonefs resynchronises {@code i_size} from the write
     * pointer on an I/O error). Callable from any thread, including an ioend completion
     * ({@link WritebackOps#ioendCompleted}); it takes no lock. Cached folios past the new size stay
     * until writeback drops them (it skips folios past EOF) or a truncate does; reads stop at the new
     * size. An append racing with it may end up past the lowered size: the device then refuses it too
     * and the next completion lowers the size again.
     *
     * @param size the size the device holds, at least 0
     */
    void shrinkSizeAfterLostWrite(long size);

    /**
     * Sets the in-memory size to the size the device holds, after another node changed the file: a
     * cluster adapter calls it from {@link FileOps#use} when it took the file's glock
     * again after a demotion had dropped the cache (GFS2's {@code gfs2_inode_refresh} setting
     * {@code i_size}). The cache holds no folio of the file then (the demotion dropped them), so
     * nothing is zeroed or truncated. Takes no lock.
     *
     * <p>The default, there only so that stand-ins of this interface in tests need not, refuses.
     *
     * @param size the size the device holds, at least 0
     * @throws UnsupportedOperationException from the default
     */
    default void refreshSize(long size) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot refresh its size");
    }
}
