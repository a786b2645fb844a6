/**
 * A filesystem skeleton: everything an adapter needs except its mapping model. {@link
 * dev.iomap.adapter.support.skeleton.SkeletonAdapter} brings an inode table, a flat or tree namespace
 * (directory blocks of {@link dev.iomap.adapter.support.ns.DirectoryBlocks}), attributes (type, size, link
 * count, modification time), a metadata journal ({@link dev.iomap.adapter.support.Journal}) with one
 * transaction per commit, a bitmap allocator whose frees wait for the next commit, allocate-at-write
 * mappings (MAPPED + NEW, validity cookies, short-write cleanup) and an fsck walker. The adapter
 * supplies a {@link dev.iomap.adapter.support.skeleton.BlockMapModel}: how a file's blocks are found,
 * allocated and freed, and which blocks it owns.
 */
package dev.iomap.adapter.support.skeleton;
