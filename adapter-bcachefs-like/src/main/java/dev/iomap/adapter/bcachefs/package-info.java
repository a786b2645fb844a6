/**
 * The bcachefs-like adapter's filesystem layer: inodes, directory entries, attributes and data
 * extents as keys of the store ({@code dev.iomap.adapter.bcachefs.store}), a copy-on-write data path
 * with per-block reservations taken by writes, checksummed and optionally compressed extents verified
 * whole on read, reflink by reference counts, and fsck with scrub. The module README has the keys'
 * format.
 */
package dev.iomap.adapter.bcachefs;
