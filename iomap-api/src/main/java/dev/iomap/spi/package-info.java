/**
 * The adapter SPI: what a filesystem adapter implements ({@link dev.iomap.spi.AdapterPlugin},
 * {@link dev.iomap.spi.FileSystemAdapter}, {@link dev.iomap.spi.MountedFileSystem} and the operation
 * tables it hands the core, in the kernel's manner: {@link dev.iomap.spi.SuperOps},
 * {@link dev.iomap.spi.InodeOps}, {@link dev.iomap.spi.FileOps}, {@link dev.iomap.spi.XattrOps} and the
 * address-space tables {@link dev.iomap.spi.IomapOps}, {@link dev.iomap.spi.WritebackOps},
 * {@link dev.iomap.spi.WriteOps})
 * and what the core hands it ({@link dev.iomap.spi.Iomap}, {@link dev.iomap.spi.IomapInode},
 * {@link dev.iomap.spi.IoendCompletion}). Optional hooks are default methods.
 *
 * <p>Adapters depend on {@code iomap-api} (and {@code adapter-support}) only, never on
 * {@code iomap-core}. {@code docs/kernel-map.md} maps these types to the kernel's
 * {@code include/linux/iomap.h}.
 */
package dev.iomap.spi;
