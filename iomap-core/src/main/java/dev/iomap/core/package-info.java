/**
 * The iomap4j engine: a page cache of large folios per inode ({@link dev.iomap.core.mm.PageCache}),
 * per-block uptodate/dirty state ({@link dev.iomap.core.mm.FolioState}), the buffered write and read
 * paths, writeback with ioends, the flusher and reclaim. Applications normally reach it through
 * {@code dev.iomap.api.IomapFileSystems}, served by {@link dev.iomap.core.vfs.CoreRuntime};
 * {@link dev.iomap.core.IomapCache} is the engine used directly, on a device with no filesystem
 * (the test program {@code dev.iomap.core.example.QuickStart}). Adapters never see this package. Which kernel function
 * each class models is in {@code docs/kernel-map.md}.
 */
package dev.iomap.core;
