package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.lock.InodeGlockCallbacks;
import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockTimeoutException;
import dev.iomap.spi.lock.LockManager;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.lock.LockStats;
import java.io.IOException;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A mount's glocks: one {@link LockHandle} per name, kept in its mode between uses (GFS2's holders)
 * until another node needs an incompatible mode. An inode glock's demotion runs
 * {@link InodeGlockCallbacks}: sync commits the journal (and on a cluster mount checkpoints it, so the
 * metadata is at home where the next holder reads it) and writes the inode's dirty data back and waits
 * for it, invalidate drops the cached dinode and tree and then the inode's cached folios, both strictly
 * before the lock manager changes the mode. A resource group's glock (cluster mounts) syncs the same way
 * and invalidates the group's in-memory copy, which is read again from the device at the next lock.
 *
 * <p>Glocks are taken before the transaction gate and the metadata lock (lock order: rename glock,
 * inode glocks, resource-group glocks, iopen glocks, transaction, folio), never while holding either: a
 * demotion for another node commits, which needs them. Thread-safe; the resource groups a thread holds are
 * remembered per thread, for the allocator ({@link #holdsRgrp}).
 */
final class Glocks {
    /** How long an operation waits for a glock. */
    static final Duration TIMEOUT = Duration.ofMinutes(5);
    /** Callbacks of a lock that caches nothing (the rename glock). */
    static final DemoteCallbacks NOTHING = new DemoteCallbacks() {
        @Override
        public void sync(LockName name, LockMode from, LockMode to) {
        }

        @Override
        public long invalidate(LockName name, LockMode from, LockMode to) {
            return 0;
        }
    };

    /** The answer to a request that waits a bounded time for the other holders ({@link #tryIopenExclusive}). */
    enum TryAnswer {
        /** Granted: every other holder let its mode go. */
        GRANTED,
        /** A holder's callbacks refused ({@link dev.iomap.spi.lock.DemoteFailedException}). */
        REFUSED,
        /** The holders did not answer in time. */
        NO_ANSWER
    }

    private final LockManager manager;
    private final DemoteCallbacks inodeCallbacks;
    private final DemoteCallbacks rgrpCallbacks;
    private final DemoteCallbacks iopenCallbacks;
    private final Map<LockName, LockHandle> handles = new ConcurrentHashMap<>();
    // Per mount and per thread: a thread running another node's demotion holds that node's locks, not these.
    @SuppressWarnings("ThreadLocalUsage")
    private final ThreadLocal<BitSet> heldRgrps = new ThreadLocal<>();

    /**
     * @param manager this node's lock manager (closed by {@link #close})
     * @param inodeCallbacks what an inode glock's demotion does
     * @param rgrpCallbacks what a resource-group glock's demotion does
     * @param iopenCallbacks what an iopen glock's demotion does ({@link Iopen#callbacks})
     */
    Glocks(LockManager manager, DemoteCallbacks inodeCallbacks, DemoteCallbacks rgrpCallbacks,
            DemoteCallbacks iopenCallbacks) {
        this.manager = manager;
        this.inodeCallbacks = inodeCallbacks;
        this.rgrpCallbacks = rgrpCallbacks;
        this.iopenCallbacks = iopenCallbacks;
    }

    /**
     * Takes one use of the inode's glock in {@code mode} (cached if the node already holds a mode
     * covering it). Whether the node's copy of the inode is current is not this method's to say: a
     * demotion's invalidate callback drops it, and the next read comes from the device (issue 35 item 5:
     * a "held no mode before" answer computed before the lock was racy, and nobody used it).
     *
     * @param ino the inode
     * @param mode SH to read, EX to change
     * @throws IOException if the lock cannot be had (timeout, a failed demotion elsewhere)
     */
    void lock(long ino, LockMode mode) throws IOException {
        lock(LockName.inode(ino), mode, inodeCallbacks, TIMEOUT);
    }

    /**
     * Takes the glocks of an inode this node just allocated, before anyone may find it: the inode's glock
     * in EX and its iopen glock in SH (GFS2's create takes both), kept cached with no use in progress. A
     * number this node has no handle of yet goes to the lock manager as one {@link LockManager#acquireAll}:
     * on ZooKeeper one transaction when nobody uses the two glocks, as nobody can for a new inode (unless a
     * node that freed the number still holds them; then each is asked for in turn).
     *
     * @param ino the new inode
     * @throws IOException if a lock cannot be had
     */
    void claimNew(long ino) throws IOException {
        LockName inode = LockName.inode(ino);
        LockName iopen = LockName.iopen(ino);
        synchronized (this) {
            if (!handles.containsKey(inode) && !handles.containsKey(iopen)) {
                List<LockHandle> taken = manager.acquireAll(List.of(
                        new LockManager.Request(inode, LockMode.EX, inodeCallbacks),
                        new LockManager.Request(iopen, LockMode.SH, iopenCallbacks)), TIMEOUT);
                handles.put(inode, taken.get(0));
                handles.put(iopen, taken.get(1));
                taken.get(0).unlock();
                taken.get(1).unlock();
                return;
            }
        }
        lock(ino, LockMode.EX);
        unlock(ino);
        holdIopen(ino);
    }

    /**
     * Takes one use of the inode's glock in {@code mode} only if the node holds a covering mode and no
     * demotion is pending ({@link LockHandle#lockIfCached}): no waiting, no request to the manager,
     * nobody's callbacks run in this thread.
     *
     * @param ino the inode
     * @param mode SH to read, EX to change
     * @throws LockTimeoutException if the use would need more; nothing was taken
     */
    void lockAtOnce(long ino, LockMode mode) throws LockTimeoutException {
        LockHandle handle = handles.get(LockName.inode(ino));
        if (handle == null || !handle.lockIfCached(mode)) {
            throw new LockTimeoutException("the glock of inode " + ino + " is not held in a mode covering "
                    + mode + " with no demotion pending, and the caller cannot wait");
        }
    }

    /** Ends one use taken by {@link #lock}; the mode stays cached. */
    void unlock(long ino) {
        unlock(LockName.inode(ino));
    }

    /**
     * Has this node hold the inode's iopen glock in at least SH (an open file here), the mode kept
     * cached with no use in progress: another node's request for EX then runs this node's
     * {@link Iopen#callbacks}, which refuse while the inode is open here.
     *
     * @param ino the inode
     * @throws IOException if the lock cannot be had (timeout: another node is freeing the inode and
     *     does not finish)
     */
    void holdIopen(long ino) throws IOException {
        lock(LockName.iopen(ino), LockMode.SH, iopenCallbacks, TIMEOUT);
        unlock(LockName.iopen(ino));
    }

    /**
     * Asks for the inode's iopen glock in EX, waiting at most {@code timeout} (GFS2's try lock with one
     * callback): granted only if no other node has the inode open, as their callbacks say.
     *
     * @param ino the inode
     * @param timeout how long the other nodes may take to answer
     * @return {@code GRANTED} (the mode stays cached until {@link #dropIopen}), {@code REFUSED} if a node
     *     has the inode open, {@code NO_ANSWER} if the holders did not answer in time
     * @throws IOException if the lock manager failed otherwise (the node was fenced)
     */
    TryAnswer tryIopenExclusive(long ino, Duration timeout) throws IOException {
        try {
            lock(LockName.iopen(ino), LockMode.EX, iopenCallbacks, timeout);
        } catch (dev.iomap.spi.lock.DemoteFailedException e) {
            return TryAnswer.REFUSED;
        } catch (LockTimeoutException e) {
            return TryAnswer.NO_ANSWER;
        }
        unlock(LockName.iopen(ino));
        return TryAnswer.GRANTED;
    }

    /** Gives up the inode's iopen glock, if this node has a handle of it. */
    void dropIopen(long ino) throws IOException {
        LockHandle handle = handles.remove(LockName.iopen(ino));
        if (handle != null) {
            handle.release();
        }
    }

    /** Takes one use of the rename glock in EX. */
    void lockRename() throws IOException {
        lock(LockName.rename(), LockMode.EX, NOTHING, TIMEOUT);
    }

    /** Ends the use taken by {@link #lockRename}. */
    void unlockRename() {
        unlock(LockName.rename());
    }

    /**
     * Takes one use of each resource group's glock in EX, by increasing index, and remembers them as
     * this thread's (the allocator allocates only there). A thread holds one set at a time. Which copies
     * are stale is the volume's to know (a demotion's invalidate marks them; {@code refreshRgrps} reads
     * those again).
     *
     * @param groups the group indexes
     * @throws IllegalStateException if this thread already holds resource groups
     * @throws IOException if a lock cannot be had; none is held then
     */
    void lockRgrps(BitSet groups) throws IOException {
        if (heldRgrps.get() != null) {
            throw new IllegalStateException("thread already holds resource groups " + heldRgrps.get());
        }
        BitSet taken = new BitSet();
        try {
            for (int g = groups.nextSetBit(0); g >= 0; g = groups.nextSetBit(g + 1)) {
                lock(LockName.rgrp(g), LockMode.EX, rgrpCallbacks, TIMEOUT);
                taken.set(g);
            }
        } catch (IOException | RuntimeException e) {
            for (int g = taken.nextSetBit(0); g >= 0; g = taken.nextSetBit(g + 1)) {
                unlock(LockName.rgrp(g));
            }
            throw e;
        }
        heldRgrps.set(taken);
    }

    /** Ends the uses taken by {@link #lockRgrps} on this thread, if any. */
    void unlockRgrps() {
        BitSet held = heldRgrps.get();
        if (held == null) {
            return;
        }
        heldRgrps.remove();
        for (int g = held.nextSetBit(0); g >= 0; g = held.nextSetBit(g + 1)) {
            unlock(LockName.rgrp(g));
        }
    }

    /** @return whether the calling thread holds resource group {@code g}'s glock */
    boolean holdsRgrp(int g) {
        BitSet held = heldRgrps.get();
        return held != null && held.get(g);
    }

    /** @return how many resource groups the calling thread holds */
    int rgrpsHeld() {
        BitSet held = heldRgrps.get();
        return held == null ? 0 : held.cardinality();
    }

    private void lock(LockName name, LockMode mode, DemoteCallbacks callbacks, Duration timeout)
            throws IOException {
        LockHandle handle = handles.get(name);
        if (handle == null) {
            synchronized (this) {
                handle = handles.get(name);
                if (handle == null) {
                    handles.put(name, manager.acquire(name, mode, callbacks, timeout));
                    return;
                }
            }
        }
        handle.lock(mode, timeout);
    }

    private void unlock(LockName name) {
        handles.get(name).unlock();
    }

    /** @return the mode this node holds the inode's glock in ({@code UN} if none) */
    LockMode mode(long ino) {
        LockHandle handle = handles.get(LockName.inode(ino));
        return handle == null ? LockMode.UN : handle.mode();
    }

    /** Forgets an inode that was freed: its glock is released. */
    void drop(long ino) throws IOException {
        LockHandle handle = handles.remove(LockName.inode(ino));
        if (handle != null) {
            handle.release();
        }
    }

    /** @return the lock manager's counters */
    LockStats stats() {
        return manager.stats();
    }

    /** @return the lock manager's service counters ({@code LockManager.serviceCounters}) */
    java.util.Map<String, Long> serviceCounters() {
        return manager.serviceCounters();
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
