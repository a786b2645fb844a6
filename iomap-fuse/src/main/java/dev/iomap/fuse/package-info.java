/**
 * Mounts an {@link dev.iomap.api.IomapFileSystem} with FUSE (libfuse 3's low-level API, bound with
 * the foreign-function API): the entry point is {@link dev.iomap.fuse.IomapMount};
 * {@link dev.iomap.fuse.FuseBridge} maps the FUSE operations and {@link dev.iomap.fuse.ErrnoMapping} the
 * errors.
 */
package dev.iomap.fuse;
