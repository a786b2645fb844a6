package dev.iomap.api;

/**
 * What an adapter may ask of the core's page cache for one of its inodes, beyond {@link IomapInode}.
 * The core's inodes implement it; an adapter reaches it with
 * {@code inode instanceof InodeCacheControl control}.
 *
 * <p>A zone file needs both: its data must be on the device before the zone is finished, and after a
 * lost write its size must fall back to the zone's write pointer (zonefs resynchronises
 * {@code i_size} from the write pointer on an I/O error).
 */
public interface InodeCacheControl extends IomapInode {

    /**
     * Writes back the dirty cache of {@code [start, end)} and waits until the device has it (not yet
     * flushed): the kernel's {@code filemap_write_and_wait_range}. May be called with the inode lock
     * held (from {@link MountedFilesystem#setSize}); must not be called from an ioend completion.
     *
     * @param start first byte
     * @param end first byte past the range
     */
    void writeAndWait(long start, long end);

    /**
     * Lowers the in-memory size to what the device really holds after writes were lost; does nothing
     * if the size is already at or below it. Callable from any thread, including an ioend completion
     * ({@link WritebackOps#ioendCompleted}); it takes no lock. Cached folios past the new size stay
     * until writeback drops them (it skips folios past EOF) or a truncate does; reads stop at the new
     * size. An append racing with it may end up past the lowered size: the device then refuses it too
     * and the next completion lowers the size again.
     *
     * @param size the size the device holds, at least 0
     */
    void shrinkSizeAfterLostWrite(long size);
}
