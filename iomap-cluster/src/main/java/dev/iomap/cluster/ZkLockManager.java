package dev.iomap.cluster;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockManager;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.lock.LockStats;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

/**
 * The glock manager of one node (mount) on ZooKeeper, through Curator: the cluster counterpart of the
 * in-process manager, with the same contract ({@link LockManager}). Every handle is one holder in
 * ZooKeeper (see {@link ZkPaths} for the layout).
 *
 * <h2>Caching and the blocking callback</h2>
 * A handle keeps its mode after its last {@link LockHandle#unlock} (its holder znode stays), so uses
 * on the same node cost no ZooKeeper request until another node needs a conflicting mode. That node's
 * request, when it is at the head of the name's queue, creates a demote request znode in the holder
 * node's demote directory; this manager watches its directory (one persistent watch, set once) and,
 * on its demoter thread, waits for the handle's uses to end (blocking new ones meanwhile), runs the
 * handle's {@link DemoteCallbacks} (sync, then invalidate), and then, in one ZooKeeper transaction,
 * lowers its holder znode and deletes the request. The requester watches the holders and is granted
 * when none conflicts.
 *
 * <h2>Order, timeouts, interrupts</h2>
 * Requests queue as sequential znodes; only the head demotes and is granted (grant and dequeue are one
 * transaction), so requests are served in arrival order. Every wait ends at the caller's timeout
 * ({@link dev.iomap.spi.lock.LockTimeoutException}) or interrupt ({@link java.io.InterruptedIOException}),
 * with the queue entry and the demote requests it made deleted again and nothing granted. If a
 * holder's callbacks fail on its node, the holder keeps its mode and writes the failure into the
 * demote request's data; the requester, which watches its requests, fails with
 * {@link dev.iomap.spi.lock.DemoteFailedException} carrying that message (a later request asks again).
 *
 * <h2>Incarnations</h2>
 * The manager is one {@link Incarnation} of its node: its holder entries and its demote directory are
 * named by it, so another mount with the same node id (after a crash) never takes them for its own. A
 * holder entry of a dead incarnation that no journal marker protects is stale (see
 * {@link ZkIncarnations}): a request that finds no demote directory for a holder in its way checks
 * that and deletes the entry, instead of waiting for a demotion nobody would answer.
 *
 * <h2>The glocks' znodes</h2>
 * A glock's znodes are created at its use and deleted by the release of its last holder when nobody
 * waits for it ({@link ZkLockNodes}): ZooKeeper holds the glocks in use, and the manager remembers only
 * its handles. So a handle's first request first tries to create them with its own holder entry in one
 * transaction, which succeeds only if nobody held or waited for the glock and is then its grant, without
 * queueing (one request; {@link #acquireAll} does so for several glocks at once, as for a new inode's).
 *
 * <h2>Dead nodes and fencing</h2>
 * Holder znodes are persistent: a node that dies keeps its glocks until a survivor recovered its
 * journal and deleted them ({@link ClusterRecovery}). Once the node's {@link Fence} tripped, this
 * manager answers no demote request: {@code acquire} and {@code lock} throw
 * {@link NodeFencedException}, and a release (also by {@link #close}) runs only
 * {@link DemoteCallbacks#invalidate} (no sync: a fenced node writes nothing) and leaves the holder
 * znode to the recovery.
 *
 * <p>The manager does not own the Curator client: close the client after the manager. Thread-safe.
 */
public final class ZkLockManager implements LockManager {
    /** How many handles a closing mount releases at once (see {@link #releaseAll}). */
    static final int CLOSE_RELEASERS = 16;

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final Incarnation self;
    private final Fence fence;
    private final ZkCalls zk;
    private final AtomicLong nextSeq = new AtomicLong(1);
    private final Map<Long, ZkLockHandle> handles = new ConcurrentHashMap<>();
    /** Demote requests answered with a failure (names in the demote directory); demoter thread only. */
    private final Set<String> failedRequests = new HashSet<>();
    private final ExecutorService demoter;
    private final Watcher demoteWatcher;
    private final Object closeLock = new Object();
    private volatile boolean closed;
    private final AtomicLong acquisitions = new AtomicLong();
    private final AtomicLong cachedHolds = new AtomicLong();
    private final AtomicLong demotions = new AtomicLong();
    private final AtomicLong releases = new AtomicLong();
    private final AtomicLong pagesInvalidated = new AtomicLong();
    private final AtomicLong demoteRequestsSent = new AtomicLong();

    /** Test seam: runs in the calling thread before each {@link #changeEntry}. */
    private volatile Runnable beforeChange = () -> { };
    /** Test seam: runs in a granted handle's thread between the grant's transaction and its new mode. */
    private volatile Runnable afterGrant = () -> { };
    /** Test seam: runs in a requester's thread between creating a demote request and watching it. */
    private volatile Runnable afterAsk = () -> { };

    /**
     * Starts the node's manager: creates its demote directory and sets the persistent watch on it
     * (two round trips).
     *
     * @param client a started Curator client of this node (its session is the node's)
     * @param filesystem the uuid of the shared filesystem: the znode subtree
     * @param self this mount's incarnation ({@link ClusterMembership#incarnation()}), whose session is
     *     {@code client}'s; no other manager may have it
     * @param fence the node's fence; checked before every ZooKeeper request and lock use
     * @throws IOException if ZooKeeper could not be reached
     */
    public ZkLockManager(CuratorFramework client, UUID filesystem, Incarnation self, Fence fence) throws IOException {
        this.client = Objects.requireNonNull(client, "client");
        this.paths = new ZkPaths(filesystem);
        this.self = Objects.requireNonNull(self, "self");
        this.fence = Objects.requireNonNull(fence, "fence");
        this.zk = new ZkCalls(fence);
        this.demoter = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "iomap-glock-demoter-" + self);
            t.setDaemon(true);
            return t;
        });
        this.demoteWatcher = event -> scheduleDemoteScan();
        String dir = paths.demoteDir(self);
        try {
            zk.call("create " + dir, () -> client.create().creatingParentsIfNeeded().forPath(dir));
        } catch (KeeperException.NodeExistsException e) {
            // a manager of this incarnation that failed to start made it: its requests are answered below
        } catch (KeeperException e) {
            demoter.shutdownNow();
            throw new IOException("cannot create " + dir + ": " + e.getMessage(), e);
        }
        try {
            zk.checked("watch " + dir, () -> client.watchers().add().withMode(AddWatchMode.PERSISTENT)
                    .usingWatcher(demoteWatcher).forPath(dir));
        } catch (IOException e) {
            demoter.shutdownNow();
            throw e;
        }
        scheduleDemoteScan();
    }

    @Override
    public LockHandle acquire(LockName name, LockMode mode, DemoteCallbacks callbacks, Duration timeout)
            throws IOException {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(callbacks, "callbacks");
        if (mode == LockMode.UN) {
            throw new IllegalArgumentException("a lock is asked for in SH, DF or EX, not UN");
        }
        ZkDeadline deadline = ZkDeadline.after(timeout);
        checkOpen();
        fence.check();
        long seq = nextSeq.getAndIncrement();
        ZkLockHandle handle = new ZkLockHandle(this, name, seq, callbacks);
        handles.put(seq, handle);
        boolean granted = false;
        try {
            handle.firstObtain(mode, deadline);
            granted = true;
        } finally {
            if (!granted) {
                handles.remove(seq);
            }
        }
        return handle;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Glocks that nobody holds or waits for (their znodes do not exist, as for a new inode's) are
     * granted all in one transaction ({@link ZkLockNodes#createHeld}); if one of them is in use, each is
     * acquired in turn as {@link #acquire} does.
     */
    @Override
    public List<LockHandle> acquireAll(List<Request> requests, Duration timeout) throws IOException {
        if (requests.size() < 2) {
            return LockManager.super.acquireAll(requests, timeout);
        }
        for (Request r : requests) {
            Objects.requireNonNull(r.name(), "name");
            Objects.requireNonNull(r.callbacks(), "callbacks");
            if (r.mode() == LockMode.UN) {
                throw new IllegalArgumentException("a lock is asked for in SH, DF or EX, not UN");
            }
        }
        ZkDeadline deadline = ZkDeadline.after(timeout);
        checkOpen();
        fence.check();
        List<ZkLockHandle> made = new ArrayList<>();
        List<LockMode> modes = new ArrayList<>();
        for (Request r : requests) {
            long seq = nextSeq.getAndIncrement();
            ZkLockHandle handle = new ZkLockHandle(this, r.name(), seq, r.callbacks());
            handles.put(seq, handle);
            made.add(handle);
            modes.add(r.mode());
        }
        made.forEach(ZkLockHandle::startObtaining);
        boolean together = false;
        try {
            together = ZkLockHandle.grantAllIfIdle(made, modes, deadline);
        } finally {
            for (ZkLockHandle handle : made) {
                handle.endObtaining(together);
                if (!together) {
                    handles.remove(handle.seq());
                }
            }
        }
        if (together) {
            return List.copyOf(made);
        }
        return LockManager.super.acquireAll(requests, timeout);
    }

    @Override
    public LockStats stats() {
        return new LockStats(acquisitions.get(), cachedHolds.get(), demotions.get(), releases.get(),
                pagesInvalidated.get());
    }

    /**
     * @return {@code zk.requests}: {@link #roundTrips()}; {@code zk.demoteRequestsSent}:
     *     {@link #demoteRequestsSent()} (the demotions this node's requests caused, on whichever node)
     */
    @Override
    public Map<String, Long> serviceCounters() {
        Map<String, Long> counters = new java.util.LinkedHashMap<>();
        counters.put("zk.requests", roundTrips());
        counters.put("zk.demoteRequestsSent", demoteRequestsSent());
        return counters;
    }

    /** @return the ZooKeeper requests this manager sent so far (a transaction counts once) */
    public long roundTrips() {
        return zk.roundTrips();
    }

    /** @return the demote requests this node's requests created for holders on other nodes (or its own) */
    public long demoteRequestsSent() {
        return demoteRequestsSent.get();
    }

    /** @return this node's id */
    public String nodeId() {
        return self.nodeId();
    }

    /** @return this mount's incarnation: what its holder entries and demote directory are named by */
    public Incarnation incarnation() {
        return self;
    }

    /** @return the handles this manager has not released (tests: what it remembers stays bounded) */
    int handleCount() {
        return handles.size();
    }

    /** @return this node's fence */
    public Fence fence() {
        return fence;
    }

    @Override
    public void close() throws IOException {
        List<ZkLockHandle> open;
        synchronized (closeLock) {
            if (closed) {
                return;
            }
            for (ZkLockHandle handle : handles.values()) {
                if (handle.holds() > 0) {
                    throw new IllegalStateException(handle + " is still held; unlock it before closing");
                }
            }
            closed = true;
            open = new ArrayList<>(handles.values());
        }
        try {
            releaseAll(open);
        } finally {
            demoter.shutdown();
            if (!fence.isFenced()) {
                String dir = paths.demoteDir(self);
                try {
                    zk.call("unwatch " + dir, () -> {
                        client.watchers().remove(demoteWatcher).ofType(Watcher.WatcherType.Any).forPath(dir);
                        return null;
                    });
                    zk.call("delete " + dir, () -> client.delete().deletingChildrenIfNeeded().forPath(dir));
                } catch (KeeperException | IOException e) {
                    // gone already, requests arrived meanwhile (they die with their requesters), or the
                    // client is closed: its session and watches are gone with it
                }
            }
            try {
                demoter.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Releases every handle of a closing mount, {@link #CLOSE_RELEASERS} at a time: each release is its own
     * callbacks (sync, invalidate) and two or three ZooKeeper calls, one round trip each, and a mount that
     * touched thousands of files holds thousands of handles (after the test bed's creates with a 1 ms delay
     * each way, nodes releasing one at a time had not exited 60 s after their unmount). The handles are of different glocks, so their
     * releases are independent, as the demoter's are. Every release is tried; the first failure is thrown,
     * with the others suppressed.
     */
    private void releaseAll(List<ZkLockHandle> open) throws IOException {
        List<ZkLockHandle> held = open.stream().filter(handle -> !handle.isReleased()).toList();
        if (held.isEmpty()) {
            return;
        }
        ExecutorService releasers = Executors.newFixedThreadPool(Math.min(CLOSE_RELEASERS, held.size()), r -> {
            Thread t = new Thread(r, "iomap-glock-close-" + self);
            t.setDaemon(true);
            return t;
        });
        List<Future<?>> releases = new ArrayList<>(held.size());
        try {
            for (ZkLockHandle handle : held) {
                releases.add(releasers.submit(() -> {
                    handle.release();
                    return null;
                }));
            }
            Throwable failure = null;
            boolean interrupted = false;
            for (Future<?> release : releases) {
                while (true) {
                    try {
                        release.get();
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true; // every release is waited for: the mount must not end under them
                    } catch (ExecutionException e) {
                        if (failure == null) {
                            failure = e.getCause();
                        } else {
                            failure.addSuppressed(e.getCause());
                        }
                        break;
                    }
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            switch (failure) {
                case null -> {
                }
                case IOException e -> throw e;
                case RuntimeException e -> throw e;
                case Error e -> throw e;
                default -> throw new IOException(failure);
            }
        } finally {
            releasers.shutdown();
        }
    }

    // ---- for ZkLockHandle ----

    CuratorFramework client() {
        return client;
    }

    ZkPaths paths() {
        return paths;
    }

    ZkCalls zk() {
        return zk;
    }

    Fence fenceForHandles() {
        return fence;
    }

    /** Creates the glock's znodes: a request found them missing (first use, or deleted as idle). */
    void createLockNodes(LockName name) throws IOException {
        ZkLockNodes.create(zk, client, paths, name);
    }

    /**
     * Deletes the glock's znodes if nobody holds or waits for it (after this node's last holder of it
     * went); a failure leaves them, which is harmless.
     */
    void deleteIfIdle(LockName name) {
        try {
            ZkLockNodes.deleteIfIdle(zk, client, paths.lock(name));
        } catch (IOException e) {
            // ZooKeeper away: the next release of the glock, or a recovery, deletes them
        }
    }

    /**
     * A holder in a request's way has no demote directory: deletes its entry if its incarnation is
     * stale (dead, and no journal marker names it), or names none (an older format). Otherwise its
     * journal waits for a recovery, which deletes the entry.
     *
     * @param holder the holder's incarnation, or null if its entry names none
     * @param entry the holder entry's path
     * @throws IOException if ZooKeeper failed
     */
    void deleteIfStale(Incarnation holder, String entry) throws IOException {
        if (holder == null || ZkIncarnations.isStale(zk, client, paths, holder)) {
            deleteQuietly(entry);
        }
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("lock manager of " + self + " is closed");
        }
    }

    void forget(ZkLockHandle handle) {
        if (handles.remove(handle.seq()) != null) {
            releases.incrementAndGet();
        }
    }

    void countAcquisition() {
        acquisitions.incrementAndGet();
    }

    void countCachedHold() {
        cachedHolds.incrementAndGet();
    }

    void countDemoteRequest() {
        demoteRequestsSent.incrementAndGet();
    }

    void countTransition(boolean byRequest, long pages) {
        if (byRequest) {
            demotions.incrementAndGet();
        }
        pagesInvalidated.addAndGet(pages);
    }

    /**
     * Changes a holder's entry from one mode to another and deletes {@code alsoDelete} (the answered
     * demote request, or the granted request's queue entry) in one transaction.
     *
     * @param from the mode the entry has now; {@code UN}: there is none
     * @param to the new mode; {@code UN}: delete the entry
     * @param alsoDelete a path to delete with the change, or null for none
     */
    void changeEntry(LockName name, String holderId, LockMode from, LockMode to, String alsoDelete)
            throws IOException {
        beforeChangeSeam();
        String dir = paths.holders(name);
        zk.checked("change " + holderId + " on " + name + " from " + from + " to " + to, () -> {
            List<CuratorOp> ops = new ArrayList<>();
            if (from != LockMode.UN) {
                ops.add(client.transactionOp().delete().forPath(dir + "/" + ZkPaths.holderEntry(holderId, from)));
            }
            if (to != LockMode.UN) {
                ops.add(client.transactionOp().create().forPath(dir + "/" + ZkPaths.holderEntry(holderId, to)));
            }
            if (alsoDelete != null) {
                ops.add(client.transactionOp().delete().forPath(alsoDelete));
            }
            return client.transaction().forOperations(ops);
        });
    }

    /**
     * Sets the seam before a grant's transaction ({@link #changeEntry}, and the transaction that creates
     * an idle glock held) (tests only: to interrupt a grant just before its transaction).
     *
     * @param hook what runs before each change; a no-op to remove it
     */
    void beforeChangeForTesting(Runnable hook) {
        beforeChange = hook;
    }

    /** Runs the seam set by {@link #beforeChangeForTesting(Runnable)}: a grant calls it before its transaction. */
    void beforeChangeSeam() {
        beforeChange.run();
    }

    /**
     * Sets the seam between a grant's transaction and the handle recording its new mode (tests only).
     *
     * @param hook what runs there; a no-op to remove it
     */
    void afterGrantForTesting(Runnable hook) {
        afterGrant = hook;
    }

    /** Runs the seam set by {@link #afterGrantForTesting(Runnable)}: a granted handle calls it. */
    void afterGrantSeam() {
        afterGrant.run();
    }

    /**
     * Sets the seam between a demote request's creation and the requester's watch on it (tests only).
     *
     * @param hook what runs there; a no-op to remove it
     */
    void afterAskForTesting(Runnable hook) {
        afterAsk = hook;
    }

    /** Runs the seam set by {@link #afterAskForTesting(Runnable)}: a requester calls it. */
    void afterAskSeam() {
        afterAsk.run();
    }

    /**
     * @param path a znode
     * @return whether it exists now
     * @throws IOException if ZooKeeper cannot say
     */
    boolean exists(String path) throws IOException {
        return zk.checked("exists " + path, () -> client.checkExists().forPath(path)) != null;
    }

    /** Asks the demoter thread to look at this node's demote requests (after a watch event or an unlock). */
    void scheduleDemoteScan() {
        try {
            demoter.execute(this::scanDemoteRequests);
        } catch (RejectedExecutionException e) {
            // closing: the handles are being released anyway
        }
    }

    /** On the demoter thread: answers every demote request addressed to this node's handles. */
    private void scanDemoteRequests() {
        if (fence.isFenced()) {
            return;
        }
        String dir = paths.demoteDir(self);
        List<String> requests;
        try {
            requests = zk.call("list " + dir, () -> client.getChildren().forPath(dir));
        } catch (KeeperException | IOException e) {
            return;   // the directory is gone (closing) or ZooKeeper is away: the fence decides
        }
        failedRequests.retainAll(requests);
        Set<Long> asked = new HashSet<>();
        for (String request : requests) {
            if (failedRequests.contains(request)) {
                continue;   // answered with the failure; its requester deletes it
            }
            long seq = ZkPaths.holderSeq(request);
            asked.add(seq);
            ZkLockHandle handle = handles.get(seq);
            String path = dir + "/" + request;
            if (handle == null) {
                deleteQuietly(path);
                continue;
            }
            handle.demoteOnRequest(ZkPaths.entryMode(request), path);
        }
        for (ZkLockHandle handle : handles.values()) {
            if (!asked.contains(handle.seq())) {
                handle.clearDemoteWanted();
            }
        }
    }

    /** On the demoter thread: tells the requester, in its request's data, why the demotion failed. */
    void reportDemoteFailure(String requestPath, Exception failure) {
        Throwable cause = failure.getCause();
        String why = failure.getMessage() + (cause == null ? "" : ": " + cause);
        failedRequests.add(requestPath.substring(requestPath.lastIndexOf('/') + 1));
        try {
            zk.call("report failure in " + requestPath, () -> client.setData()
                    .forPath(requestPath, why.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (KeeperException | IOException e) {
            // the requester gave up already (NoNode), or ZooKeeper is away: it times out instead
        }
    }

    void deleteQuietly(String path) {
        try {
            zk.call("delete " + path, () -> client.delete().forPath(path));
        } catch (KeeperException | IOException e) {
            // gone already (NoNode), or ZooKeeper is away: an ephemeral request dies with its session
        }
    }

    @Override
    public String toString() {
        return "ZkLockManager[" + self + " on " + paths.root() + "]";
    }
}
