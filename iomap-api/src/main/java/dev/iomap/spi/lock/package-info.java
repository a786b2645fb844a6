/**
 * Cluster locks (glocks) for adapters that share one device between nodes, as GFS2 does: a
 * {@link dev.iomap.spi.lock.LockManager} grants {@link dev.iomap.spi.lock.LockName}d locks in
 * {@link dev.iomap.spi.lock.LockMode}s, and demotes a holder through its
 * {@link dev.iomap.spi.lock.DemoteCallbacks} (write back, then drop the cache, through
 * {@link dev.iomap.spi.IomapInode#writeAndWait} and {@link dev.iomap.spi.IomapInode#invalidateCache})
 * strictly before another holder gets a conflicting mode. Lock order: rename glock, inode glocks by
 * number, resource-group glocks, journal transaction, folio lock last.
 */
package dev.iomap.spi.lock;
