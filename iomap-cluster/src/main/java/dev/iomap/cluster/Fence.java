package dev.iomap.cluster;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.RetryPolicy;
import org.apache.curator.RetrySleeper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * A node's permission to write to the shared device: a <em>lease</em> that only answers of the
 * ZooKeeper server renew, and a <em>fence</em> that, once tripped, holds for good. An adapter calls
 * {@link #check} before every write it issues to the shared device (and again right after it, see
 * gfs2-like's {@code FencedDevice}); the cluster lock manager calls it before every ZooKeeper request
 * and every lock use.
 *
 * <h2>The lease</h2>
 * The server expires a session once it has received nothing from the client for the negotiated
 * session timeout {@code T}; every packet it receives restarts that count. So the fence sends a small
 * request ({@code exists /}) on the node's session every {@code T/10}, and when the answer comes,
 * extends the lease to <em>the time that request was sent</em> {@code + T - T/5}: the server got the
 * request after it was sent, so it cannot expire the session before {@code sent + T}, and the lease
 * ends {@code T/5} earlier. Only an answer renews it, never a local timer, and an answer to a request
 * sent long ago renews nothing new. Times are {@link System#nanoTime()}, which runs on while the
 * process is stopped: a JVM paused ({@code SIGSTOP}, a long GC) past its lease finds the lease over
 * when it resumes, before its ZooKeeper client had a chance to notice anything.
 *
 * <p>While the lease is over {@link #check} throws {@link LeaseExpiredException}: the operation fails
 * (EIO), nothing is written, and nothing is shut down; an answer in the same session renews the lease
 * and the node goes on (a short connection loss: Curator's {@code SUSPENDED}, then {@code RECONNECTED}).
 * ZooKeeper requests of the node are retried while the lease lasts and fail once it is over (the
 * client's retry policy is replaced by one bounded by the lease), so an operation caught by a
 * connection loss waits at most until the lease ends (plus one connection attempt of the client).
 *
 * <h2>The fence</h2>
 * When the session is really gone the fence trips, for good: Curator's {@code LOST} (the server expired
 * the session, or the connection stayed lost for a whole session timeout), or the client starting a new
 * session. Then {@link #check} throws {@link NodeFencedException} (a filesystem shutdown): unmount; the
 * survivors, which see the session's ephemeral membership znode go only when the server expired it,
 * recover the node's journal after their recovery margin (see {@link ClusterMembership}).
 *
 * <h2>What remains</h2>
 * A check and the write after it are two steps: a process stopped between them writes once it resumes,
 * however late. The device fence keeps that step to a few instructions (the check is made in the thread
 * that issues the device write, right before it) and checks again when the write completed, failing a
 * write that completed after the lease (it may have landed late); only storage that refuses a fenced
 * node's writes (SCSI persistent reservations, STONITH in GFS2) closes it. {@code nanoTime} does not
 * count a suspend of the whole host either. See docs/design-notes.md (issue 35, items 9 and 13).
 *
 * <p>Thread-safe.
 */
public final class Fence {
    /** The lease ends this share of the session timeout ({@code 1/5}) before the server may expire it. */
    static final int MARGIN_DIVISOR = 5;
    /** Lease requests sent per session timeout. */
    static final int RENEWALS_PER_SESSION = 10;
    private static final long MIN_RENEW_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final AtomicReference<String> reason = new AtomicReference<>();
    /** The node's client; null for a {@link #manual()} fence, which has no lease. */
    private final CuratorFramework client;
    private final ZooKeeper session;
    private final long instanceIndex;
    /** When the lease ends, in {@link System#nanoTime()}. */
    private final AtomicLong leaseEnd = new AtomicLong();
    /** When the request of the newest answer was sent, in {@link System#nanoTime()}. */
    private final AtomicLong lastAnswered = new AtomicLong();
    private final AtomicLong renewals = new AtomicLong();
    private final ScheduledExecutorService renewer;
    private final ConnectionStateListener listener = this::stateChanged;

    private Fence(CuratorFramework client, ZooKeeper session, long instanceIndex) {
        this.client = client;
        this.session = session;
        this.instanceIndex = instanceIndex;
        if (client == null) {
            this.renewer = null;
            return;
        }
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1,
                Thread.ofPlatform().name("iomap-zk-lease-" + Long.toHexString(session.getSessionId())).daemon()
                        .factory());
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.renewer = executor;
    }

    /**
     * Starts the lease of {@code client}'s current session: asks the server once (the lease starts with
     * its answer), then every {@code T/10}; trips the fence on Curator's {@code LOST} or a new session,
     * and gives the client a retry policy bounded by the lease.
     *
     * @param client the node's started, connected ZooKeeper client
     * @return the fence
     * @throws IOException if the server did not answer the first request (no connection, or the session
     *     is gone)
     */
    public static Fence watching(CuratorFramework client) throws IOException {
        Objects.requireNonNull(client, "client");
        ZooKeeper session;
        try {
            session = client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new IOException("no ZooKeeper session to lease: " + e.getMessage(), e);
        }
        Fence fence = new Fence(client, session, client.getZookeeperClient().getInstanceIndex());
        try {
            fence.renewNow();
        } catch (IOException e) {
            fence.renewer.shutdownNow();
            throw e;
        }
        client.getConnectionStateListenable().addListener(fence.listener);
        client.getZookeeperClient().setRetryPolicy(new LeaseBoundRetry(fence));
        long period = Math.max(MIN_RENEW_PERIOD_NANOS,
                TimeUnit.MILLISECONDS.toNanos(session.getSessionTimeout()) / RENEWALS_PER_SESSION);
        fence.renewer.scheduleWithFixedDelay(fence::sendRenewal, period, period, TimeUnit.NANOSECONDS);
        return fence;
    }

    /** @return a fence tied to no client and with no lease, tripped only by {@link #trip} (single node, tests) */
    public static Fence manual() {
        return new Fence(null, null, 0);
    }

    /**
     * Trips the fence, for good; the first reason is kept. Stops renewing the lease.
     *
     * @param why the reason, for the exception message
     */
    public void trip(String why) {
        if (!reason.compareAndSet(null, why + " (fenced at " + Instant.now() + ")")) {
            return;
        }
        if (client != null) {
            renewer.shutdownNow();
            client.getConnectionStateListenable().removeListener(listener);
        }
    }

    /** @return whether the fence tripped (for good; a lease that is merely over is not a trip) */
    public boolean isFenced() {
        return reason() != null;
    }

    /**
     * Call right before every device write, and again once it completed.
     *
     * @throws NodeFencedException if the node fenced itself: it must not write any more, ever
     * @throws LeaseExpiredException if the lease is over: nothing may be written until it is renewed
     */
    public void check() throws IOException {
        String why = reason();
        if (why != null) {
            throw new NodeFencedException("this node fenced itself and writes nothing more to the shared device: "
                    + why + "; unmount, the other nodes recover its journal");
        }
        long remaining = leaseRemainingNanos();
        if (remaining <= 0) {
            throw new LeaseExpiredException("this node's ZooKeeper lease ended "
                    + TimeUnit.NANOSECONDS.toMillis(-remaining) + " ms ago: ZooKeeper has not answered a request"
                    + " sent in the last " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastAnswered.get())
                    + " ms, so the server may expire the session; nothing is written until it answers again"
                    + " (if the session is lost, the node fences itself: then unmount)");
        }
    }

    /** @return the reason the fence tripped, or null; a closed client (its session ended) trips it */
    public String reason() {
        if (reason.get() == null && client != null && client.getState() == CuratorFrameworkState.STOPPED) {
            trip("the ZooKeeper client was closed, ending session 0x" + Long.toHexString(session.getSessionId()));
        }
        return reason.get();
    }

    /** @return how long the lease still lasts, in nanoseconds (0 or less: over); very long for a manual fence */
    long leaseRemainingNanos() {
        return client == null ? Long.MAX_VALUE : leaseEnd.get() - System.nanoTime();
    }

    /** @return how many answers renewed the lease so far */
    long renewals() {
        return renewals.get();
    }

    /** Sends one lease request and waits for its answer (the first, in {@link #watching}). */
    private void renewNow() throws IOException {
        long sent = System.nanoTime();
        try {
            session.exists("/", false);
        } catch (KeeperException e) {
            throw new IOException("ZooKeeper did not answer the lease's first request: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while starting the ZooKeeper lease");
        }
        renew(sent);
    }

    /** Sends one lease request; its answer, if one comes, renews the lease. Runs on the renewer thread. */
    private void sendRenewal() {
        if (isFenced()) {
            return;   // tripped meanwhile, or the client was closed (which trips it)
        }
        if (client.getZookeeperClient().getInstanceIndex() != instanceIndex) {
            trip("the ZooKeeper client replaced session 0x" + Long.toHexString(session.getSessionId()));
            return;
        }
        long sent = System.nanoTime();
        session.exists("/", false, (rc, path, ctx, stat) -> {
            // "/" is missing only under a chroot not created yet: an answer all the same
            if (rc == KeeperException.Code.OK.intValue() || rc == KeeperException.Code.NONODE.intValue()) {
                renew(sent);
            }
        }, null);
    }

    /** Extends the lease to {@code sent + T - T/5} unless it already lasts longer. */
    private void renew(long sent) {
        long timeout = TimeUnit.MILLISECONDS.toNanos(session.getSessionTimeout());
        long end = sent + timeout - timeout / MARGIN_DIVISOR;
        leaseEnd.accumulateAndGet(end, Fence::later);
        lastAnswered.accumulateAndGet(sent, Fence::later);
        renewals.incrementAndGet();
    }

    private static long later(long a, long b) {
        return a - b >= 0 ? a : b;
    }

    private void stateChanged(CuratorFramework c, ConnectionState state) {
        switch (state) {
            case LOST -> trip("the ZooKeeper session 0x" + Long.toHexString(session.getSessionId())
                    + " is lost (expired, or no connection for a whole session timeout)");
            case RECONNECTED -> {
                if (client.getZookeeperClient().getInstanceIndex() != instanceIndex) {
                    trip("the ZooKeeper client reconnected with a new session instead of 0x"
                            + Long.toHexString(session.getSessionId()));
                } else {
                    renewSoon();
                }
            }
            default -> {
                // SUSPENDED: the lease runs on and decides; CONNECTED, READ_ONLY: nothing to do
            }
        }
    }

    /** Sends a lease request now rather than at the next period (after a reconnection). */
    private void renewSoon() {
        try {
            renewer.execute(this::sendRenewal);
        } catch (RejectedExecutionException e) {
            // tripped or stopped meanwhile: no lease to renew
        }
    }

    /**
     * The client's retry policy once it has a fence: a request cut by a lost connection is tried again
     * (after a pause of 100 ms, doubling to at most 1 s) for as long as the lease lasts, and not after it
     * ended or the fence tripped.
     */
    private record LeaseBoundRetry(Fence fence) implements RetryPolicy {
        private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
        private static final long MAX_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

        @Override
        public boolean allowRetry(int retryCount, long elapsedTimeMs, RetrySleeper sleeper) {
            long remaining = usableNanos();
            if (remaining <= 0) {
                return false;
            }
            long pause = Math.min(MAX_PAUSE_NANOS, FIRST_PAUSE_NANOS << Math.min(retryCount, 4));
            try {
                sleeper.sleepFor(Math.min(pause, remaining), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            return usableNanos() > 0;
        }

        private long usableNanos() {
            return fence.isFenced() ? 0 : fence.leaseRemainingNanos();
        }
    }
}
