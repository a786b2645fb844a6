/**
 * The iomap4j API and SPI: what a filesystem adapter implements ({@link dev.iomap.api.IomapOps},
 * {@link dev.iomap.api.WritebackOps}, {@link dev.iomap.api.FilesystemAdapter}) and the value types the
 * core hands it ({@link dev.iomap.api.Iomap}, {@link dev.iomap.api.IomapInode}).
 *
 * <p>Adapters depend on this package (and {@code adapter-support}) only, never on {@code iomap-core}.
 * All offsets and lengths are in bytes and {@code long}; a file offset is never negative.
 */
package dev.iomap.api;
