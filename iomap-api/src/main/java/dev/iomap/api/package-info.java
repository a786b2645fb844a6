/**
 * What applications call: {@link dev.iomap.api.IomapFileSystems} (format, mount and check by adapter
 * name), {@link dev.iomap.api.IomapFileSystem} and {@link dev.iomap.api.IomapFile}, the options
 * ({@link dev.iomap.api.MountOptions}, {@link dev.iomap.api.PageCacheOptions},
 * {@link dev.iomap.api.FormatOptions}), statistics ({@link dev.iomap.api.IoStats}) and the typed
 * errors. The engine behind it is found at run time, so an application compiles against this package
 * (and {@code dev.iomap.device} for its device) alone.
 *
 * <p>What an adapter implements is in {@code dev.iomap.spi}; block devices are in
 * {@code dev.iomap.device}. All offsets and lengths are in bytes and {@code long}; a file offset is
 * never negative.
 */
package dev.iomap.api;
