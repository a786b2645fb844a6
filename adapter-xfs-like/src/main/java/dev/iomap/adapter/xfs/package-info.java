/**
 * The xfs-like filesystem adapter: the reference adapter of iomap4j, using every feature of the core
 * (delayed allocation, unwritten extents, copy-on-write with a srcmap, large folios, the validity
 * cookie). Entry points: {@link dev.iomap.adapter.xfs.XfsLikeAdapter} and
 * {@link dev.iomap.adapter.xfs.XfsLikePlugin}. Depends on {@code iomap-api} and {@code adapter-support}
 * only. The on-device format is described, byte by byte, in the module README.
 */
package dev.iomap.adapter.xfs;
