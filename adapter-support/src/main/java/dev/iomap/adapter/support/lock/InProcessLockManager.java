package dev.iomap.adapter.support.lock;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockManager;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.lock.LockOrderException;
import dev.iomap.spi.lock.LockStats;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The embedded {@link LockManager}: one node's view of an {@link InProcessLockSpace}. With one manager
 * over its own space (the no-argument constructor) it is the single-node default; several managers
 * over one space act as nodes of a cluster inside one JVM, which is how demotion is tested.
 *
 * <p>Requests for a name are served first come, first served (one queue per name, the head does
 * the demotions it needs and is granted, then the next); a holder's pending demotion blocks that
 * holder's new uses, so neither side starves. The demote callbacks of a holder run on the thread of
 * the request that needs them, with no table lock held. Waits end at the caller's timeout
 * ({@link dev.iomap.spi.lock.LockTimeoutException}) or on interrupt
 * ({@link java.io.InterruptedIOException}, interrupt status set), with nothing granted; callbacks
 * already running are not interrupted.
 *
 * <p>With {@code checkLockOrder} (a debug mode for tests) every lock taken by a thread is checked
 * against those the thread holds through this manager: a name that is not larger than all of them
 * fails with {@link LockOrderException}. It tracks holds per thread, so a use must then be unlocked
 * on the thread that locked it.
 *
 * <p>Thread-safe.
 */
public final class InProcessLockManager implements LockManager {
    private final InProcessLockSpace space;
    private final String nodeName;
    private final boolean checkLockOrder;
    private final ThreadLocal<List<LockName>> heldByThread = ThreadLocal.withInitial(ArrayList::new);
    /** This manager's handles not yet released; guarded by the space's mutex. */
    private final Set<InProcessLockHandle> handles = new LinkedHashSet<>();
    private boolean closed;
    private final AtomicLong acquisitions = new AtomicLong();
    private final AtomicLong cachedHolds = new AtomicLong();
    private final AtomicLong demotions = new AtomicLong();
    private final AtomicLong releases = new AtomicLong();
    private final AtomicLong pagesInvalidated = new AtomicLong();

    /** A single-node manager over a lock space of its own, without lock order checks. */
    public InProcessLockManager() {
        this(new InProcessLockSpace(), "node", false);
    }

    /**
     * One node over a shared lock space.
     *
     * @param space the lock table shared with the other nodes
     * @param nodeName a name for messages
     * @param checkLockOrder whether to check the lock order per thread (debug mode)
     */
    public InProcessLockManager(InProcessLockSpace space, String nodeName, boolean checkLockOrder) {
        this.space = Objects.requireNonNull(space, "space");
        this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
        this.checkLockOrder = checkLockOrder;
    }

    @Override
    public LockHandle acquire(LockName name, LockMode mode, DemoteCallbacks callbacks, Duration timeout)
            throws IOException {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(callbacks, "callbacks");
        if (mode == LockMode.UN) {
            throw new IllegalArgumentException("a lock is asked for in SH, DF or EX, not UN");
        }
        Deadline deadline = Deadline.after(timeout);
        checkOrder(name);
        InProcessLockHandle handle = new InProcessLockHandle(this, space, name, callbacks);
        space.mutex.lock();
        try {
            if (closed) {
                throw new IllegalStateException("lock manager of " + nodeName + " is closed");
            }
            handle.acquire(mode, deadline);
            handles.add(handle);
        } finally {
            space.mutex.unlock();
        }
        noteHeld(name);
        return handle;
    }

    @Override
    public LockStats stats() {
        return new LockStats(acquisitions.get(), cachedHolds.get(), demotions.get(), releases.get(),
                pagesInvalidated.get());
    }

    /**
     * The node of this manager died (a test's power cut): every holder it has is dropped at once, without
     * demote callbacks and without waiting for uses in progress, so other managers' requests are granted
     * now; the manager is closed. The caller makes sure the node's journal was recovered first.
     */
    public void die() {
        space.mutex.lock();
        try {
            closed = true;
            for (InProcessLockHandle handle : handles) {
                handle.dropForDeadNode();
                releases.incrementAndGet();
            }
            handles.clear();
            space.changed.signalAll();
        } finally {
            space.mutex.unlock();
        }
    }

    @Override
    public void close() throws IOException {
        List<InProcessLockHandle> open;
        space.mutex.lock();
        try {
            for (InProcessLockHandle handle : handles) {
                if (handle.isHeld()) {
                    throw new IllegalStateException(handle + " is still held; unlock it before closing");
                }
            }
            closed = true;
            open = List.copyOf(handles);
        } finally {
            space.mutex.unlock();
        }
        for (InProcessLockHandle handle : open) {
            handle.release();
        }
    }

    /** @return the node name given at construction */
    public String nodeName() {
        return nodeName;
    }

    void checkOrder(LockName name) {
        if (!checkLockOrder) {
            return;
        }
        for (LockName held : heldByThread.get()) {
            if (held.compareTo(name) >= 0) {
                throw new LockOrderException(Thread.currentThread().getName() + " on " + nodeName + " asks for "
                        + name + " while holding " + held + ": take rename, then inodes by number, then rgrps");
            }
        }
    }

    void noteHeld(LockName name) {
        if (checkLockOrder) {
            heldByThread.get().add(name);
        }
    }

    void noteUnheld(LockName name) {
        if (checkLockOrder) {
            heldByThread.get().remove(name);
        }
    }

    /** Caller holds the space's mutex. */
    void forget(InProcessLockHandle handle) {
        if (handles.remove(handle)) {
            releases.incrementAndGet();
        }
    }

    void countAcquisition() {
        acquisitions.incrementAndGet();
    }

    void countCachedHold() {
        cachedHolds.incrementAndGet();
    }

    void countTransition(boolean byRequest, long pages) {
        if (byRequest) {
            demotions.incrementAndGet();
        }
        pagesInvalidated.addAndGet(pages);
    }

    @Override
    public String toString() {
        return "InProcessLockManager[" + nodeName + "]";
    }
}
