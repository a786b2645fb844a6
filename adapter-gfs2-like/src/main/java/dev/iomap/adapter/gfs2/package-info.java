/**
 * The gfs2-like filesystem adapter: a model of GFS2 with blocks allocated at write time in a
 * height-indexed indirect tree, stuffed (inline) files, ordered and journaled data, resource groups
 * with two bits per block, per-node journals and inode glocks. Entry points:
 * {@link dev.iomap.adapter.gfs2.Gfs2LikeAdapter} and {@link dev.iomap.adapter.gfs2.Gfs2LikePlugin}.
 * Depends on {@code iomap-api} and {@code adapter-support} only. The on-device format is described,
 * byte by byte, in the module README.
 */
package dev.iomap.adapter.gfs2;
