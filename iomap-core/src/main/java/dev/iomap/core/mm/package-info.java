/**
 * The page-cache layer of the engine, the kernel's mm/: folios and their per-block state
 * ({@link dev.iomap.core.mm.Folio}, {@link dev.iomap.core.mm.FolioState}), one mapping's folios by
 * index ({@link dev.iomap.core.mm.PageCache}, the kernel's {@code address_space}), the page
 * allocator, the LRU and reclaim, the readahead window, writeback errors and the flusher thread.
 * It names no class of the core outside this package: it calls the filesystem above through
 * {@link dev.iomap.core.mm.AddressSpaceOps} ({@code address_space_operations}) and sees the cache
 * as a {@link dev.iomap.core.mm.WritebackDomain} ({@code bdi_writeback}). The iomap layer in
 * {@code dev.iomap.core} stands on it; {@code LayeringTest} in it-tests enforces the direction.
 */
package dev.iomap.core.mm;
