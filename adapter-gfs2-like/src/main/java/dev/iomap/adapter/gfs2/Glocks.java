package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.lock.InodeGlockCallbacks;
import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockManager;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.lock.LockStats;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A mount's inode glocks: one {@link LockHandle} per inode, kept in its mode between uses (GFS2's
 * holders) until another node needs an incompatible mode; the demotion then runs
 * {@link InodeGlockCallbacks}: sync commits the journal and writes the inode's dirty data back and waits
 * for it, invalidate drops the cached dinode and tree and then the inode's cached folios, both strictly
 * before the lock manager changes the mode. Taken before the transaction gate and the metadata lock
 * (lock order: inode glocks, transaction, folio). Thread-safe.
 */
final class Glocks {
    /** How long an operation waits for a glock. */
    static final Duration TIMEOUT = Duration.ofMinutes(5);

    private final LockManager manager;
    private final DemoteCallbacks callbacks;
    private final Map<Long, LockHandle> handles = new ConcurrentHashMap<>();

    Glocks(LockManager manager, DemoteCallbacks callbacks) {
        this.manager = manager;
        this.callbacks = callbacks;
    }

    /**
     * Takes one use of the inode's glock in {@code mode} (cached if the node already holds a mode
     * covering it).
     *
     * @param ino the inode
     * @param mode SH to read, EX to change
     * @throws IOException if the lock cannot be had (timeout, a failed demotion elsewhere)
     */
    void lock(long ino, LockMode mode) throws IOException {
        LockHandle handle = handles.get(ino);
        if (handle == null) {
            synchronized (this) {
                handle = handles.get(ino);
                if (handle == null) {
                    handles.put(ino, manager.acquire(LockName.inode(ino), mode, callbacks, TIMEOUT));
                    return;
                }
            }
        }
        handle.lock(mode, TIMEOUT);
    }

    /** Ends one use taken by {@link #lock}; the mode stays cached. */
    void unlock(long ino) {
        handles.get(ino).unlock();
    }

    /** Forgets an inode that was freed: its glock is released. */
    void drop(long ino) throws IOException {
        LockHandle handle = handles.remove(ino);
        if (handle != null) {
            handle.release();
        }
    }

    /** @return the lock manager's counters */
    LockStats stats() {
        return manager.stats();
    }

    /** Releases every glock and closes the manager (unmount). */
    void close() throws IOException {
        for (LockHandle handle : List.copyOf(handles.values())) {
            handle.release();
        }
        handles.clear();
        manager.close();
    }
}
