package dev.iomap.adapter.support.lock;

import dev.iomap.spi.IomapInode;
import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import java.util.Objects;

/**
 * The demote callbacks of an inode glock, GFS2's {@code inode_go_sync} and {@code inode_go_inval}, over
 * the cache primitives of {@link IomapInode}:
 * <ul>
 *   <li>sync: flush the adapter's log (the journal commit that makes the inode's metadata durable),
 *       then write back and wait the whole file's dirty data ({@link IomapInode#writeAndWait});</li>
 *   <li>invalidate: drop the adapter's cached metadata of the inode, then the file's cached folios
 *       ({@link IomapInode#invalidateCache}), which refuses dirty folios rather than lose them.</li>
 * </ul>
 * The inode is looked up when a callback runs, since a glock may outlive the inode's place in the
 * cache; when it is not cached there is nothing to write back or drop. Thread-safe if the adapter's
 * hooks are.
 */
public final class InodeGlockCallbacks implements DemoteCallbacks {

    /** Finds the inode a glock covers. */
    @FunctionalInterface
    public interface InodeLookup {
        /**
         * @param ino the inode number (the lock name's number)
         * @return the cached inode, or null if the inode has no cache on this node
         */
        IomapInode cachedInode(long ino);
    }

    /** An adapter step run by a callback: flushing the log, or dropping cached metadata. */
    @FunctionalInterface
    public interface InodeStep {
        /**
         * @param ino the inode number
         * @throws IOException if the step failed; the demotion does not happen
         */
        void run(long ino) throws IOException;
    }

    private final InodeLookup lookup;
    private final InodeStep flushLog;
    private final InodeStep dropMetadata;

    /**
     * @param lookup finds the inode's cache
     * @param flushLog commits the adapter's log for the inode (GFS2's {@code gfs2_log_flush}), run first
     *     in sync even when no data is cached
     * @param dropMetadata drops the adapter's cached metadata of the inode, run first in invalidate
     */
    public InodeGlockCallbacks(InodeLookup lookup, InodeStep flushLog, InodeStep dropMetadata) {
        this.lookup = Objects.requireNonNull(lookup, "lookup");
        this.flushLog = Objects.requireNonNull(flushLog, "flushLog");
        this.dropMetadata = Objects.requireNonNull(dropMetadata, "dropMetadata");
    }

    /**
     * Flushes the log, then writes back and waits the whole file.
     *
     * @throws IllegalArgumentException if {@code name} is not an inode lock
     */
    @Override
    public void sync(LockName name, LockMode from, LockMode to) throws IOException {
        long ino = inodeNumber(name);
        flushLog.run(ino);
        IomapInode inode = lookup.cachedInode(ino);
        if (inode != null) {
            inode.writeAndWait(0, Long.MAX_VALUE);
        }
    }

    /**
     * Drops the cached metadata, then the cached folios.
     *
     * @return the pages dropped
     * @throws dev.iomap.spi.DirtyCacheException if a folio is still dirty (it is kept)
     * @throws IllegalArgumentException if {@code name} is not an inode lock
     */
    @Override
    public long invalidate(LockName name, LockMode from, LockMode to) throws IOException {
        long ino = inodeNumber(name);
        dropMetadata.run(ino);
        IomapInode inode = lookup.cachedInode(ino);
        return inode == null ? 0 : inode.invalidateCache();
    }

    private static long inodeNumber(LockName name) {
        if (name.type() != dev.iomap.spi.lock.LockType.INODE) {
            throw new IllegalArgumentException("inode glock callbacks given " + name);
        }
        return name.number();
    }
}
