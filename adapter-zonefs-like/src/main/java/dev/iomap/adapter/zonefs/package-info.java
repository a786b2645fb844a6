/**
 * The zonefs-like adapter: one file per zone of a {@link dev.iomap.device.ZonedBlockDevice}, under
 * {@code /cnv} (conventional zones: fixed size, ordinary buffered I/O) and {@code /seq} (sequential
 * zones: append-only at the write pointer, truncate only to 0 or the capacity). The only metadata is
 * a superblock; mount rebuilds the files and their sizes from the zone report. Depends on
 * {@code iomap-api} and {@code adapter-support} only.
 */
package dev.iomap.adapter.zonefs;
