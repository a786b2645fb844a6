/**
 * The metadata store of the bcachefs-like adapter: copy-on-write B-trees with checksummed nodes, a
 * journal of keys, and the data-space allocator with reference counts. Knows nothing of files: the
 * filesystem layer above ({@code dev.iomap.adapter.bcachefs}) gives keys their meaning.
 */
package dev.iomap.adapter.bcachefs.store;
