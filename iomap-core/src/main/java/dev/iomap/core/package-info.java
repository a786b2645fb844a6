/**
 * The iomap4j engine: a page cache of large folios per inode ({@link dev.iomap.core.PageCache}),
 * per-block uptodate/dirty state ({@link dev.iomap.core.FolioState}), the buffered write and read
 * paths and writeback with ioends. Applications reach it through {@link dev.iomap.core.IomapCache};
 * adapters never see this package.
 */
package dev.iomap.core;
