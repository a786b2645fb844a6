package dev.iomap.spi;

/**
 * {@link IomapInode#invalidateCache} found dirty folios after the caller wrote the file back: data
 * written without the lock that should have excluded it, or written back too early. The dirty folios
 * were kept (nothing was lost); this is a bug in the caller's locking, not a device failure.
 */
public final class DirtyCacheException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** The inode whose cache was being dropped. */
    private final long ino;
    /** How many dirty pages were kept. */
    private final long dirtyPages;

    /**
     * @param ino the inode whose cache was being dropped
     * @param dirtyPages how many dirty pages were kept
     * @param firstDirtyOffset the file offset of the first dirty folio kept
     */
    public DirtyCacheException(long ino, long dirtyPages, long firstDirtyOffset) {
        super("inode " + ino + " still has " + dirtyPages + " dirty page(s) from offset " + firstDirtyOffset
                + " when its cache is dropped; they were kept: write the file back first, and dirty it only"
                + " under the lock being demoted");
        this.ino = ino;
        this.dirtyPages = dirtyPages;
    }

    /** @return the inode whose cache was being dropped */
    public long ino() {
        return ino;
    }

    /** @return how many dirty pages were kept */
    public long dirtyPages() {
        return dirtyPages;
    }
}
