package dev.iomap.core.mm;

/**
 * What the filesystem above does for one mapping, as the page cache calls it: the kernel's
 * {@code address_space_operations} ({@code mapping->a_ops}). The page-cache layer reaches the
 * layer above only through this interface and {@link WritebackDomain}; it never names the iomap
 * classes that implement them.
 */
public interface AddressSpaceOps {

    /**
     * For a mapping with no filesystem above it (a cache made alone): a clean folio not under
     * writeback may always go, and there is nothing to write back.
     */
    AddressSpaceOps NONE = new AddressSpaceOps() {
        @Override
        public boolean releaseFolio(Folio folio) {
            return !folio.isDirty() && !folio.isWriteback();
        }

        @Override
        public void writepages(long start, long end, boolean sync) {
        }

        @Override
        public void writepagesDirtiedBefore(long dirtiedBefore) {
        }
    };

    /**
     * Lets a clean folio go before reclaim removes it from the cache: the filesystem drops its private
     * per-folio state (the kernel's {@code filemap_release_folio} calling {@code ->release_folio}).
     *
     * @param folio a locked folio
     * @return whether the folio may be removed from the cache; false for a dirty folio or one under
     *     writeback
     */
    boolean releaseFolio(Folio folio);

    /**
     * Starts writeback of the dirty data in {@code [start, end)} without waiting for it (the kernel's
     * {@code do_writepages} calling {@code ->writepages}). I/O errors are recorded on the mapping's
     * {@link WritebackError}, not thrown.
     *
     * @param start first byte
     * @param end first byte past the range
     * @param sync whether folios already under writeback are waited for and written again
     */
    void writepages(long start, long end, boolean sync);

    /**
     * Starts writeback of the folios that have been dirty since before {@code dirtiedBefore} (the
     * kernel's {@code ->writepages} with a {@code for_kupdate} writeback control). Errors as
     * {@link #writepages}.
     *
     * @param dirtiedBefore a {@link System#nanoTime()} instant
     */
    void writepagesDirtiedBefore(long dirtiedBefore);
}
