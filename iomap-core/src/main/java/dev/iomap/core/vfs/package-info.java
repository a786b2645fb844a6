/**
 * The generic filesystem layer: paths, open files and the ordering of page-cache work around an
 * adapter's {@link dev.iomap.spi.MountedFileSystem} (the kernel's VFS plus the iomap parts of a
 * filesystem's file operations). {@link dev.iomap.core.vfs.CoreRuntime} serves
 * {@link dev.iomap.api.IomapFileSystems}.
 */
package dev.iomap.core.vfs;
