/**
 * The embedded glock manager and the inode glock's callbacks: {@link
 * dev.iomap.adapter.support.lock.InProcessLockManager} implements {@link dev.iomap.spi.lock.LockManager}
 * for one node or, over a shared {@link dev.iomap.adapter.support.lock.InProcessLockSpace}, for several
 * nodes in one JVM (how demotion is tested); {@link dev.iomap.adapter.support.lock.InodeGlockCallbacks}
 * is GFS2's {@code inode_go_sync}/{@code inode_go_inval} over {@link dev.iomap.spi.IomapInode}'s cache
 * primitives.
 */
package dev.iomap.adapter.support.lock;
