package dev.iomap.core;

import dev.iomap.core.mm.AddressSpaceOps;
import dev.iomap.core.mm.Folio;

/**
 * The address-space operations of a file in an {@link IomapCache}, as a filesystem built on iomap
 * fills its {@code address_space_operations} with the iomap helpers: {@code iomap_release_folio}
 * ({@link Invalidate#releaseFolio}) and {@code iomap_writepages} ({@link Writeback}). The page-cache
 * layer's reclaim and flusher call them.
 */
final class IomapAddressSpaceOps implements AddressSpaceOps {
    private final IomapContext inode;

    IomapAddressSpaceOps(IomapContext inode) {
        this.inode = inode;
    }

    @Override
    public boolean releaseFolio(Folio folio) {
        return Invalidate.releaseFolio(folio);
    }

    @Override
    public void writepages(long start, long end, boolean sync) {
        new Writeback(inode).writepages(start, end, sync);
    }

    @Override
    public void writepagesDirtiedBefore(long dirtiedBefore) {
        new Writeback(inode).writepagesDirtiedBefore(dirtiedBefore);
    }
}
