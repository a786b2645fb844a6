/**
 * The iomap4j API and SPI: what a filesystem adapter implements ({@link dev.iomap.spi.IomapOps},
 * {@link dev.iomap.spi.WritebackOps}, {@link dev.iomap.spi.FilesystemAdapter}) and the value types the
 * core hands it ({@link dev.iomap.spi.Iomap}, {@link dev.iomap.spi.IomapInode}).
 *
 * <p>Adapters depend on this package (and {@code adapter-support}) only, never on {@code iomap-core}.
 * All offsets and lengths are in bytes and {@code long}; a file offset is never negative.
 */
package dev.iomap.api;
