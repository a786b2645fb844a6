package dev.iomap.cluster;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.DemoteFailedException;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.lock.LockUses;
import dev.iomap.spi.trace.GlockDemoteRqEvent;
import dev.iomap.spi.trace.GlockPromoteEvent;
import dev.iomap.spi.trace.GlockStateChangeEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * One holder of one glock on one node, in ZooKeeper {@code holders/<node>.<N>.<seq>=<MODE>} (its
 * incarnation {@code <node>.<N>}, its number {@code seq} there). Local state
 * (mode, hold count, flags) is guarded by {@link #state}; a mode change in ZooKeeper (a grant, a
 * demotion, a release) happens under {@link #transition}, so the demoter thread and this handle's
 * own request never change the holder znode at the same time.
 *
 * <p>A use that needs a mode the handle's mode does not cover changes the mode only once no use it
 * would not cover is in progress in another thread (SH to DF drops the cache a reader in SH relies on;
 * DF to SH lets the node cache around a DF use), as GFS2 changes a glock's state only with no holder
 * granted; new uses wait meanwhile. A thread already inside a use never waits behind that change or a
 * pending demotion for a use its handle's mode covers (the change or demotion waits for that thread),
 * and a thread that waits inside a use for a change is not waited for by another change
 * ({@link LockUses}).
 */
final class ZkLockHandle implements LockHandle {
    private final ZkLockManager manager;
    private final LockName name;
    private final long seq;
    private final String holderId;
    private final DemoteCallbacks callbacks;
    private final ReentrantLock state = new ReentrantLock();
    private final Condition changed = state.newCondition();
    private final ReentrantLock transition = new ReentrantLock();
    private LockMode mode = LockMode.UN;
    /** The uses in progress, by thread and mode. */
    private final LockUses uses = new LockUses();
    /** A demote request waits for this handle's uses to end; new uses wait meanwhile. */
    private boolean demoteWanted;
    /** The thread running this handle's callbacks (demotion or release), or null. */
    private Thread demotingThread;
    /** A thread of this handle asks ZooKeeper for a mode; other uses wait for its result. */
    private boolean obtaining;
    private boolean released;
    /** Requests this handle has queued so far: part of each queue entry's name (written by the obtaining thread only). */
    private long requests;

    ZkLockHandle(ZkLockManager manager, LockName name, long seq, DemoteCallbacks callbacks) {
        this.manager = manager;
        this.name = name;
        this.seq = seq;
        this.holderId = ZkPaths.holderId(manager.incarnation(), seq);
        this.callbacks = callbacks;
    }

    @Override
    public LockName name() {
        return name;
    }

    long seq() {
        return seq;
    }

    @Override
    public LockMode mode() {
        state.lock();
        try {
            return mode;
        } finally {
            state.unlock();
        }
    }

    @Override
    public int holds() {
        state.lock();
        try {
            return uses.total();
        } finally {
            state.unlock();
        }
    }

    boolean isReleased() {
        state.lock();
        try {
            return released;
        } finally {
            state.unlock();
        }
    }

    @Override
    public void lock(LockMode wanted, Duration timeout) throws IOException {
        checkWanted(wanted);
        ZkDeadline deadline = ZkDeadline.after(timeout);
        state.lock();
        try {
            checkUsable();
            if (demotingThread == Thread.currentThread()) {
                throw new IllegalStateException(this + " locked from its own demote callback");
            }
            manager.fenceForHandles().check();
            boolean cached = uses.heldByCurrentThread() ? nestedCached(wanted, deadline) : cached(wanted, deadline);
            if (cached) {
                uses.start(wanted);
                manager.countCachedHold();
                return;
            }
            obtaining = true;
            awaitUsesNotCovered(wanted, deadline);
        } finally {
            state.unlock();
        }
        obtainThenClearFlag(wanted, deadline);
    }

    /**
     * A use by a thread with no use in progress: waits for a pending demotion and another thread's
     * request to end. Caller holds {@link #state}.
     *
     * @return whether the mode covers {@code wanted} (else the caller asks ZooKeeper)
     */
    private boolean cached(LockMode wanted, ZkDeadline deadline) throws IOException {
        while (demoteWanted || demotingThread != null || obtaining) {
            deadline.await(changed, this + " waiting for its demotion or its other request to end");
        }
        checkUsable();
        return mode.covers(wanted);
    }

    /**
     * A use by a thread inside a use of this handle: starts at once if the mode covers it (a pending
     * demotion or change waits for this thread's uses, so this thread must not wait for it); else waits
     * for another thread's request to end, marked as waiting so that request does not wait for this
     * thread's uses. Caller holds {@link #state}.
     *
     * @return whether the mode covers {@code wanted} (else the caller asks ZooKeeper)
     */
    private boolean nestedCached(LockMode wanted, ZkDeadline deadline) throws IOException {
        if (mode.covers(wanted)) {
            return true;
        }
        uses.waitForChange(true);
        changed.signalAll();
        try {
            while (demotingThread != null || obtaining) {
                deadline.await(changed, this + " waiting, inside a use, for its other request to end");
            }
            checkUsable();
            return mode.covers(wanted);
        } finally {
            uses.waitForChange(false);
        }
    }

    /**
     * Before a change to {@code wanted}: waits until no other thread has a use in progress that
     * {@code wanted} does not cover (SH to DF, DF to SH; nothing to wait for on the way to EX), as GFS2
     * changes a glock's state only with no holder granted. New uses wait meanwhile ({@link #obtaining} is
     * set). Caller holds {@link #state}; on failure clears the flag again.
     */
    private void awaitUsesNotCovered(LockMode wanted, ZkDeadline deadline) throws IOException {
        try {
            while (uses.othersNotCovered(wanted)) {
                deadline.await(changed, this + " waiting for its uses in " + mode + " to end before it changes to "
                        + wanted);
            }
            checkUsable();
        } catch (IOException | RuntimeException e) {
            obtaining = false;
            changed.signalAll();
            throw e;
        }
    }

    @Override
    public boolean lockIfCached(LockMode wanted) {
        checkWanted(wanted);
        state.lock();
        try {
            checkUsable();
            if (demoteWanted || demotingThread != null || obtaining || !mode.covers(wanted)
                    || manager.fenceForHandles().isFenced()) {
                return false;
            }
            uses.start(wanted);
            manager.countCachedHold();
            return true;
        } finally {
            state.unlock();
        }
    }

    /** The acquire of a new handle: the same as a {@link #lock} that must ask ZooKeeper. */
    void firstObtain(LockMode wanted, ZkDeadline deadline) throws IOException {
        state.lock();
        try {
            obtaining = true;
        } finally {
            state.unlock();
        }
        boolean granted = false;
        try {
            obtainThenClearFlag(wanted, deadline, true);
            granted = true;
        } finally {
            if (!granted) {
                state.lock();
                try {
                    released = true;
                } finally {
                    state.unlock();
                }
            }
        }
    }

    private void obtainThenClearFlag(LockMode wanted, ZkDeadline deadline) throws IOException {
        obtainThenClearFlag(wanted, deadline, false);
    }

    /** @param first whether this is the handle's first request ({@link #obtain}) */
    private void obtainThenClearFlag(LockMode wanted, ZkDeadline deadline, boolean first) throws IOException {
        try {
            obtain(wanted, deadline, first);
        } finally {
            state.lock();
            try {
                obtaining = false;
                changed.signalAll();
            } finally {
                state.unlock();
            }
        }
    }

    @Override
    public void unlock() {
        boolean scan;
        state.lock();
        try {
            checkUsable();
            if (uses.total() == 0) {
                throw new IllegalStateException(this + " unlocked more often than locked");
            }
            uses.end();
            scan = uses.total() == 0 && demoteWanted;
            changed.signalAll();
        } finally {
            state.unlock();
        }
        if (scan) {
            manager.scheduleDemoteScan();
        }
    }

    @Override
    public void release() throws IOException {
        ZkDeadline deadline = ZkDeadline.after(ZkDeadline.FOREVER);
        LockMode from;
        state.lock();
        try {
            checkReleasable();
            while (demotingThread != null || obtaining) {
                deadline.await(changed, this + " waiting for its demotion to end before release");
            }
            checkReleasable();
            demotingThread = Thread.currentThread();
            from = mode;
        } finally {
            state.unlock();
        }
        boolean done = false;
        transition.lock();
        try {
            if (from != LockMode.UN) {
                boolean fenced = manager.fenceForHandles().isFenced();
                // A fenced node must not write: it drops its cache without sync; its holder znode stays
                // until a survivor recovered its journal.
                long pages = runCallbacks(from, LockMode.UN, !fenced);
                manager.countTransition(false, pages);
                if (!fenced) {
                    manager.deleteQuietly(manager.paths().holders(name) + "/" + ZkPaths.holderEntry(holderId, from));
                    manager.deleteIfIdle(name);
                }
            }
            done = true;
        } finally {
            transition.unlock();
            state.lock();
            try {
                demotingThread = null;
                if (done) {
                    GlockStateChangeEvent.emit(manager.nodeId(), name, mode, LockMode.UN);
                    mode = LockMode.UN;
                    released = true;
                }
                changed.signalAll();
            } finally {
                state.unlock();
            }
        }
        manager.forget(this);
    }

    /**
     * On the demoter thread: a node asked this holder to go down to {@code target}. Defers (marks the
     * demotion wanted) while uses are in progress; else runs the callbacks and lowers the holder znode
     * and deletes the request in one transaction.
     */
    void demoteOnRequest(LockMode target, String requestPath) {
        LockMode from;
        state.lock();
        try {
            GlockDemoteRqEvent.emit(manager.nodeId(), name, mode, target, true);
            if (!released && obtaining && (mode == LockMode.UN || mode == target)) {
                // A grant of this handle's own may be between its transaction and recording its mode
                // (the request was made because its entry is already there): it holds the transition
                // lock throughout, so wait for it, then look again. Waiting in the queue holds no lock.
                state.unlock();
                transition.lock();
                try {
                    // nothing: having had the lock means the grant in flight, if any, has ended
                } finally {
                    transition.unlock();
                    state.lock();
                }
            }
            if (released || mode == LockMode.UN || mode == target) {
                manager.deleteQuietly(requestPath);
                return;
            }
            if (uses.total() > 0 || demotingThread != null) {
                demoteWanted = true;
                return;
            }
            demotingThread = Thread.currentThread();
        } finally {
            state.unlock();
        }
        boolean done = false;
        LockMode newMode = target;
        transition.lock();
        try {
            from = mode();
            if (from != LockMode.UN && from != target) {
                long pages = runCallbacks(from, target, true);
                lowerEntry(from, target, requestPath);
                manager.countTransition(true, pages);
            } else {
                newMode = from;
                manager.deleteQuietly(requestPath);
            }
            done = true;
        } catch (IOException | RuntimeException e) {
            // The holder keeps its mode; the requester reads why from its request and gives up.
            newMode = null;
            manager.reportDemoteFailure(requestPath, e);
        } finally {
            transition.unlock();
            state.lock();
            try {
                demotingThread = null;
                demoteWanted = false;
                if (done && newMode != null) {
                    GlockStateChangeEvent.emit(manager.nodeId(), name, mode, newMode);
                    mode = newMode;
                }
                changed.signalAll();
            } finally {
                state.unlock();
            }
        }
    }

    /**
     * Lowers this holder's entry from {@code from} to {@code target} and deletes the answered request, in
     * one transaction. If the call fails but the transaction reached ZooKeeper all the same (its reply
     * was lost: an interrupt cuts short only the wait for it, and Curator's retry after a lost connection
     * finds the old entry gone), returns as if it succeeded: ZooKeeper records {@code target}, the
     * requester is granted on that, so the handle must hold {@code target} too, not go on using
     * {@code from}. Only this handle changes its entry, under {@link #transition}: the old entry's absence
     * tells that the transaction happened. The check goes to the server after the transaction on the same
     * session; if it cannot be made, the failure stands (the holder keeps {@code from}, the requester is
     * told the demotion failed).
     */
    private void lowerEntry(LockMode from, LockMode target, String requestPath) throws IOException {
        try {
            manager.changeEntry(name, holderId, from, target, requestPath);
        } catch (IOException | RuntimeException e) {
            String old = manager.paths().holders(name) + "/" + ZkPaths.holderEntry(holderId, from);
            boolean[] applied = {false};
            cleanUp(() -> applied[0] = !manager.exists(old));
            if (!applied[0]) {
                throw e;
            }
        }
    }

    /** On the demoter thread: no request waits for this handle any more (its requester gave up). */
    void clearDemoteWanted() {
        state.lock();
        try {
            if (demoteWanted) {
                demoteWanted = false;
                changed.signalAll();
            }
        } finally {
            state.unlock();
        }
    }

    /**
     * Queues a request for {@code wanted}, waits for its turn, demotes the holders in the way and is
     * granted; on failure deletes what it created. The caller set {@link #obtaining}. A handle's first
     * request tries {@link #grantIfIdle} first: a glock this node uses for the first time is often one
     * nobody uses (a new inode's), and is then granted in one transaction.
     *
     * @param first whether this is the handle's first request
     */
    private void obtain(LockMode wanted, ZkDeadline deadline, boolean first) throws IOException {
        manager.checkOpen();
        manager.fenceForHandles().check();
        if (first && grantIfIdle(wanted, deadline)) {
            return;
        }
        String queueDir = manager.paths().queue(name);
        byte[] data = (holderId + " " + wanted).getBytes(StandardCharsets.UTF_8);
        // A name of this request's own before ZooKeeper's sequence number: an interrupt can cut the
        // create short after ZooKeeper's client has sent it, and the entry must then be found by name.
        requests++;
        String prefix = "q-" + holderId + "-" + requests + "-";
        String queued;
        try {
            queued = queue(queueDir + "/" + prefix, data);
        } catch (IOException | RuntimeException e) {
            deleteEntriesStartingWith(queueDir, prefix);
            deleteIfIdleUnlessHeld();
            throw e;
        }
        Set<String> demoteRequests = new LinkedHashSet<>();
        WatchSignal signal = new WatchSignal(manager.fenceForHandles());
        boolean granted = false;
        try {
            while (true) {
                manager.fenceForHandles().check();
                if (signal.takeDataChanged()) {
                    checkDemoteFailures(demoteRequests);
                }
                long seen = signal.events();
                if (waitingBehind(queueDir, queued, signal)) {
                    signal.await(seen, deadline, this + " waiting in the queue for " + wanted);
                    continue;
                }
                if (tryGrant(wanted, queued, signal, demoteRequests, deadline)) {
                    granted = true;
                    return;
                }
                signal.await(seen, deadline, this + " waiting for holders in the way of " + wanted + " to demote");
            }
        } finally {
            if (!granted) {
                cleanUp(() -> {
                    manager.deleteQuietly(queued);
                    demoteRequests.forEach(manager::deleteQuietly);
                });
                deleteIfIdleUnlessHeld();
            }
        }
    }

    /**
     * Grants {@code wanted} at once if the glock's znodes do not exist: nobody holds or waits for it then,
     * and one transaction creates them with this holder's entry ({@link ZkLockNodes#createHeld}).
     *
     * @return whether it was granted (one use started); false if the znodes exist (queue as usual)
     */
    private boolean grantIfIdle(LockMode wanted, ZkDeadline deadline) throws IOException {
        return grantAllIfIdle(List.of(this), List.of(wanted), deadline);
    }

    /**
     * The first request of several new handles of one manager ({@link ZkLockManager#acquireAll}): grants
     * each its mode in one transaction if none of their glocks' znodes exist. The caller set
     * {@link #obtaining} on each, or is the handle's own first request.
     *
     * <p>Holds each handle's {@link #transition} from the transaction until its mode is recorded, as
     * {@link #tryGrant} does, so that a demote request arriving in between waits for the mode. If the
     * transaction's outcome is unknown (a connection loss, an interrupt), the entries are looked for and
     * deleted where they were made, before the failure is thrown: a holder entry this node does not know it
     * has would never be demoted.
     *
     * @param handles new handles of one manager, of different glocks
     * @param modes the mode each wants
     * @return whether all were granted (one use started on each); false if the znodes of one exist, and
     *     nothing was granted
     */
    static boolean grantAllIfIdle(List<ZkLockHandle> handles, List<LockMode> modes, ZkDeadline deadline)
            throws IOException {
        ZkLockManager manager = handles.get(0).manager;
        List<ZkLockNodes.Held> glocks = new ArrayList<>();
        for (int i = 0; i < handles.size(); i++) {
            ZkLockHandle h = handles.get(i);
            glocks.add(new ZkLockNodes.Held(h.name, ZkPaths.holderEntry(h.holderId, modes.get(i))));
        }
        int locked = 0;
        try {
            for (ZkLockHandle h : handles) {
                deadline.lock(h.transition, h + " waiting for its own demotion to finish");
                locked++;
            }
            boolean created;
            try {
                manager.beforeChangeSeam();
                created = ZkLockNodes.createHeld(manager.zk(), manager.client(), manager.paths(), glocks);
            } catch (KeeperException e) {
                undoIdleGrants(manager, glocks);
                throw new IOException("ZooKeeper request failed: create " + glocks + " held: " + e.getMessage(), e);
            } catch (IOException | RuntimeException e) {
                undoIdleGrants(manager, glocks);
                throw e;
            }
            if (!created) {
                return false;
            }
            manager.afterGrantSeam();
            for (int i = 0; i < handles.size(); i++) {
                handles.get(i).recordGrant(modes.get(i), deadline);
            }
            return true;
        } finally {
            for (int i = 0; i < locked; i++) {
                handles.get(i).transition.unlock();
            }
        }
    }

    /** Records a grant's new mode and starts one use; the caller holds {@link #transition}. */
    private void recordGrant(LockMode wanted, ZkDeadline deadline) {
        state.lock();
        try {
            GlockStateChangeEvent.emit(manager.nodeId(), name, mode, wanted);
            GlockPromoteEvent.emit(manager.nodeId(), name, wanted, deadline.elapsedNanos());
            mode = wanted;
            uses.start(wanted);
            manager.countAcquisition();
        } finally {
            state.unlock();
        }
    }

    /**
     * After {@link #grantAllIfIdle}'s transaction failed with an unknown outcome: deletes each holder
     * entry that was made (its glock's znodes too, if nobody else came meanwhile). The checks go to the
     * server after the transaction on the same session.
     */
    private static void undoIdleGrants(ZkLockManager manager, List<ZkLockNodes.Held> glocks) {
        cleanUp(() -> {
            for (ZkLockNodes.Held g : glocks) {
                String path = manager.paths().holders(g.name()) + "/" + g.entry();
                if (manager.exists(path)) {
                    manager.deleteQuietly(path);
                    manager.deleteIfIdle(g.name());
                }
            }
        });
    }

    /** Marks a handle {@link ZkLockManager#acquireAll} made as obtaining (before {@link #grantAllIfIdle}). */
    void startObtaining() {
        state.lock();
        try {
            obtaining = true;
        } finally {
            state.unlock();
        }
    }

    /**
     * Ends {@link #startObtaining}; a handle not granted is marked released (its manager forgets it).
     *
     * @param granted whether the handle was granted
     */
    void endObtaining(boolean granted) {
        state.lock();
        try {
            obtaining = false;
            if (!granted) {
                released = true;
            }
            changed.signalAll();
        } finally {
            state.unlock();
        }
    }

    /**
     * Creates this request's queue entry, creating the glock's znodes first if they are not there (its
     * first use, or they were deleted as idle: {@link ZkLockNodes}); they can vanish again between the
     * two only if another node used and released the glock meanwhile, so a few tries are plenty.
     *
     * @return the entry's path
     */
    private String queue(String entryPrefix, byte[] data) throws IOException {
        CuratorFramework client = manager.client();
        for (int attempt = 1; ; attempt++) {
            try {
                return manager.zk().call("queue " + this, () -> client.create()
                        .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(entryPrefix, data));
            } catch (KeeperException.NoNodeException e) {
                if (attempt == 10) {
                    throw new IOException(this + ": its glock's znodes vanished " + attempt + " times before it"
                            + " could queue (other nodes took and released the glock each time); try again", e);
                }
                manager.createLockNodes(name);
            } catch (KeeperException e) {
                throw new IOException("ZooKeeper request failed: queue " + this + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * After a request that was not granted: the glock's znodes go if this handle holds nothing and nobody
     * else holds or waits for it.
     */
    private void deleteIfIdleUnlessHeld() {
        if (mode() == LockMode.UN) {
            boolean interrupted = Thread.interrupted();
            try {
                manager.deleteIfIdle(name);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Deletes this request's queue entry after its create failed without telling its name: the
     * create may still have reached the server (an interrupt cuts short only the wait for the reply),
     * and an entry left there would stand at the head of the queue for the session's life, every
     * request behind it waiting for a holder that never comes. The listing goes to the server after
     * the create on the same session, so it sees the entry if the create happened at all.
     */
    private void deleteEntriesStartingWith(String queueDir, String prefix) {
        cleanUp(() -> {
            CuratorFramework client = manager.client();
            for (String entry : manager.zk().checked("list " + queueDir, () -> client.getChildren().forPath(queueDir))) {
                if (entry.startsWith(prefix)) {
                    manager.deleteQuietly(queueDir + "/" + entry);
                }
            }
        });
    }

    /** ZooKeeper calls that undo what a failed request left behind. */
    @FunctionalInterface
    private interface Cleanup {
        void run() throws IOException;
    }

    /**
     * Runs {@code cleanup} with the interrupt status cleared (an interrupted thread's ZooKeeper calls
     * would fail at once) and sets it again after; failures are ignored: a session that is gone took
     * its ephemeral entries with it, and a closed client leaves nothing to clean up.
     */
    private static void cleanUp(Cleanup cleanup) {
        boolean interrupted = Thread.interrupted();
        try {
            cleanup.run();
        } catch (IOException | RuntimeException e) {
            // see above
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * @return whether an earlier request is still queued (then {@code watcher} fires when it leaves).
     *     Entries of this handle's other than {@code queued} are deleted first: this handle has one
     *     request at a time ({@link #obtaining}), so they are left over, by a create that reached the
     *     server although its reply was lost (Curator's retry after a connection loss then made
     *     {@code queued}), or by an earlier request whose cleanup could not reach ZooKeeper. Nobody waits
     *     on them, and they live as long as the session: a request behind one would wait for ever.
     */
    private boolean waitingBehind(String queueDir, String queued, Watcher watcher) throws IOException {
        CuratorFramework client = manager.client();
        List<String> queue = new ArrayList<>(manager.zk().checked("list " + queueDir,
                () -> client.getChildren().forPath(queueDir)));
        String mine = queued.substring(queued.lastIndexOf('/') + 1);
        String ownPrefix = "q-" + holderId + "-";
        for (var entries = queue.iterator(); entries.hasNext(); ) {
            String entry = entries.next();
            if (!entry.equals(mine) && entry.startsWith(ownPrefix)) {
                deleteLeftOver(queueDir + "/" + entry);
                entries.remove();
            }
        }
        queue.sort(Comparator.comparing(entry -> entry.substring(entry.length() - 10)));
        int at = queue.indexOf(mine);
        if (at < 0) {
            throw new IOException(this + ": its queue entry " + queued + " vanished (session lost?)");
        }
        if (at == 0) {
            return false;
        }
        String before = queueDir + "/" + queue.get(at - 1);
        Object stat = manager.zk().checked("watch " + before,
                () -> client.checkExists().usingWatcher(watcher).forPath(before));
        return stat != null;
    }

    /** Deletes a left-over queue entry of this handle's; one already gone is fine. */
    private void deleteLeftOver(String path) throws IOException {
        try {
            manager.zk().call("delete left-over " + path, () -> manager.client().delete().forPath(path));
        } catch (KeeperException.NoNodeException e) {
            // deleted meanwhile: what was wanted
        } catch (KeeperException e) {
            throw new IOException("cannot delete " + this + "'s left-over queue entry " + path + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * At the head of the queue: grants {@code wanted} if no other holder conflicts (after this holder's
     * own {@code SH} to {@code DF} invalidation), else asks the conflicting holders to demote.
     *
     * @return whether it was granted (one use started)
     */
    private boolean tryGrant(LockMode wanted, String queued, Watcher watcher, Set<String> demoteRequests,
            ZkDeadline deadline) throws IOException {
        CuratorFramework client = manager.client();
        String holdersDir = manager.paths().holders(name);
        deadline.lock(transition, this + " waiting for its own demotion to finish");
        try {
            List<String> holders = manager.zk().checked("list " + holdersDir,
                    () -> client.getChildren().usingWatcher(watcher).forPath(holdersDir));
            List<String> inTheWay = new ArrayList<>();
            for (String entry : holders) {
                boolean other = !ZkPaths.entryHolder(entry).equals(holderId);
                if (other && !ZkPaths.entryMode(entry).compatibleWith(wanted)) {
                    inTheWay.add(entry);
                }
            }
            if (!inTheWay.isEmpty()) {
                askToDemote(inTheWay, wanted, queued, watcher, demoteRequests);
                return false;
            }
            LockMode current = mode();
            if (current.allowsCaching() && !wanted.allowsCaching()) {
                long pages = runCallbacks(current, LockMode.UN, true);   // SH to DF: drop our own cache first
                manager.countTransition(true, pages);
            }
            try {
                manager.changeEntry(name, holderId, current, wanted, queued);
            } catch (IOException | RuntimeException e) {
                undoGrantIfApplied(current, wanted, queued);
                throw e;
            }
            manager.afterGrantSeam();
            state.lock();
            try {
                GlockStateChangeEvent.emit(manager.nodeId(), name, mode, wanted);
                GlockPromoteEvent.emit(manager.nodeId(), name, wanted, deadline.elapsedNanos());
                mode = wanted;
                uses.start(wanted);
                manager.countAcquisition();
            } finally {
                state.unlock();
            }
            demoteRequests.forEach(manager::deleteQuietly);
            demoteRequests.clear();
            return true;
        } finally {
            transition.unlock();
        }
    }

    /**
     * Puts this holder's entry back to {@code current} if the grant's transaction reached the server
     * although the call failed: an interrupt cuts short only the wait for ZooKeeper's reply. The
     * caller is told the request failed, so an entry left in {@code wanted} would name a holder this
     * node does not know it is (its demoter answers requests by the handle's own mode), and every
     * other node would wait for a demotion that never comes. The transaction deleted the queue entry,
     * so that entry's absence tells that it happened; the check goes to the server after the
     * transaction on the same session.
     */
    private void undoGrantIfApplied(LockMode current, LockMode wanted, String queued) {
        cleanUp(() -> {
            if (!manager.exists(queued)) {
                manager.changeEntry(name, holderId, wanted, current, null);
            }
        });
    }

    /**
     * Creates a demote request for every holder in the way (named after this request's queue entry,
     * so each is new) and watches its data: a holder whose callbacks failed writes the failure there.
     */
    private void askToDemote(List<String> inTheWay, LockMode wanted, String queued, Watcher watcher,
            Set<String> demoteRequests) throws IOException {
        CuratorFramework client = manager.client();
        String tag = queued.substring(queued.lastIndexOf('/') + 1);
        for (String entry : inTheWay) {
            LockMode theirs = ZkPaths.entryMode(entry);
            LockMode target = theirs == LockMode.EX && wanted == LockMode.SH ? LockMode.SH : LockMode.UN;
            String holder = ZkPaths.entryHolder(entry);
            Incarnation incarnation = ZkPaths.holderIncarnation(holder);
            String entryPath = manager.paths().holders(name) + "/" + entry;
            if (incarnation == null) {
                manager.deleteIfStale(null, entryPath);   // an older format's entry: nobody can answer it
                continue;
            }
            String request = manager.paths().demoteDir(incarnation) + "/" + ZkPaths.demoteRequest(holder, target, tag);
            if (!demoteRequests.add(request)) {
                continue;
            }
            try {
                manager.zk().call("ask " + holder + " to demote", () -> client.create()
                        .withMode(CreateMode.EPHEMERAL).forPath(request, new byte[0]));
                manager.countDemoteRequest();
                manager.afterAskSeam();
                Stat watched = manager.zk().call("watch " + request, () -> client.checkExists()
                        .usingWatcher(watcher).forPath(request));
                if (watched != null && watched.getVersion() > 0) {
                    // The holder's callbacks failed and it wrote so before the watch was set: no data
                    // event will come for it, so read the report now.
                    checkDemoteFailures(Set.of(request));
                }
            } catch (KeeperException.NodeExistsException e) {
                // made by an earlier loop of this request that the set forgot: impossible, but harmless
            } catch (KeeperException.NoNodeException e) {
                // No demote directory: the holder's incarnation ended. If its journal waits for a
                // recovery, that deletes the entry; if nothing protects it, it is stale: delete it now
                // (checked once per request: the request stays in the set).
                manager.deleteIfStale(incarnation, entryPath);
            } catch (KeeperException e) {
                throw new IOException("cannot ask " + holder + " to demote " + name + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * @throws DemoteFailedException if a holder wrote into one of this request's demote requests that
     *     its callbacks failed
     */
    private void checkDemoteFailures(Set<String> demoteRequests) throws IOException {
        CuratorFramework client = manager.client();
        for (String request : demoteRequests) {
            byte[] data;
            try {
                data = manager.zk().call("read " + request, () -> client.getData().forPath(request));
            } catch (KeeperException e) {
                continue;   // answered and deleted
            }
            if (data.length > 0) {
                throw new DemoteFailedException(this + ": the holder asked to demote could not: "
                        + new String(data, StandardCharsets.UTF_8), null);
            }
        }
    }

    private long runCallbacks(LockMode from, LockMode target, boolean sync) throws IOException {
        try {
            return DemoteCallbacks.transition(callbacks, name, from, target, sync);
        } catch (IOException | RuntimeException e) {
            throw new DemoteFailedException(this + ": the callbacks for " + from + " to " + target
                    + " failed; the holder keeps " + from, e);
        }
    }

    private static void checkWanted(LockMode wanted) {
        if (wanted == LockMode.UN) {
            throw new IllegalArgumentException("a lock is asked for in SH, DF or EX, not UN");
        }
    }

    private void checkUsable() {
        if (released) {
            throw new IllegalStateException(this + " was released");
        }
    }

    private void checkReleasable() {
        checkUsable();
        if (uses.total() > 0) {
            throw new IllegalStateException(this + " released with " + uses.total() + " use(s) in progress");
        }
        if (demotingThread == Thread.currentThread()) {
            throw new IllegalStateException(this + " released from its own demote callback");
        }
    }

    @Override
    public String toString() {
        return "glock " + name + " of " + holderId;
    }
}
