package dev.iomap.adapter.support.lock;

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
import java.time.Duration;

/**
 * One holder of one name in an {@link InProcessLockSpace}. Its state is guarded by the space's mutex;
 * its callbacks run with the mutex released and {@link #demotingThread} set, which keeps every other
 * request for the name and every new use of this handle waiting until they returned.
 *
 * <p>A use that needs a mode this holder's mode does not cover changes the mode only once no use it
 * would not cover is in progress in another thread (SH to DF drops the cache a reader in SH relies on;
 * DF to SH lets the node cache around a DF use), as GFS2 changes a glock's state only with no holder
 * granted; new uses wait meanwhile. A thread already inside a use never waits behind that change or a
 * pending demotion for a use the mode covers (they wait for that thread), and a thread that waits
 * inside a use for a change is not waited for by another change ({@link LockUses}).
 */
final class InProcessLockHandle implements LockHandle {
    private final InProcessLockManager manager;
    private final InProcessLockSpace space;
    private final LockName name;
    private final DemoteCallbacks callbacks;
    private LockMode mode = LockMode.UN;
    /** The uses in progress, by thread and mode. */
    private final LockUses uses = new LockUses();
    /** Set by the request at the head of the queue while it waits for this handle's uses to end. */
    private boolean demoteWanted;
    /** The thread running this handle's callbacks, or null. */
    private Thread demotingThread;
    private boolean released;

    InProcessLockHandle(InProcessLockManager manager, InProcessLockSpace space, LockName name,
            DemoteCallbacks callbacks) {
        this.manager = manager;
        this.space = space;
        this.name = name;
        this.callbacks = callbacks;
    }

    @Override
    public LockName name() {
        return name;
    }

    @Override
    public LockMode mode() {
        space.mutex.lock();
        try {
            return mode;
        } finally {
            space.mutex.unlock();
        }
    }

    @Override
    public int holds() {
        space.mutex.lock();
        try {
            return uses.total();
        } finally {
            space.mutex.unlock();
        }
    }

    @Override
    public void lock(LockMode wanted, Duration timeout) throws IOException {
        checkWanted(wanted);
        Deadline deadline = Deadline.after(timeout);
        manager.checkOrder(name);
        space.mutex.lock();
        try {
            checkUsable();
            if (demotingThread == Thread.currentThread()) {
                throw new IllegalStateException(this + " locked from its own demote callback");
            }
            boolean nested = uses.heldByCurrentThread();
            // A thread inside a use does not wait for a pending demotion or change: they wait for it.
            while (!nested && (demoteWanted || demotingThread != null)) {
                deadline.await(space.changed, this + " waiting for its demotion to end");
            }
            checkUsable();
            if (mode.covers(wanted)) {
                uses.start(wanted);
                manager.countCachedHold();
            } else if (nested) {
                uses.waitForChange(true);
                space.changed.signalAll();   // a change waiting for this thread's uses no longer does
                try {
                    obtain(wanted, deadline);
                } finally {
                    uses.waitForChange(false);
                }
            } else {
                obtain(wanted, deadline);
            }
        } finally {
            space.mutex.unlock();
        }
        manager.noteHeld(name);
    }

    @Override
    public boolean lockIfCached(LockMode wanted) {
        checkWanted(wanted);
        space.mutex.lock();
        try {
            checkUsable();
            if (demoteWanted || demotingThread != null || !mode.covers(wanted)) {
                return false;
            }
            uses.start(wanted);
            manager.countCachedHold();
        } finally {
            space.mutex.unlock();
        }
        manager.noteHeld(name);
        return true;
    }

    @Override
    public void unlock() {
        space.mutex.lock();
        try {
            checkUsable();
            if (uses.total() == 0) {
                throw new IllegalStateException(this + " unlocked more often than locked");
            }
            uses.end();
            space.changed.signalAll();
        } finally {
            space.mutex.unlock();
        }
        manager.noteUnheld(name);
    }

    @Override
    public void release() throws IOException {
        Deadline deadline = Deadline.after(Deadline.FOREVER);
        space.mutex.lock();
        try {
            checkReleasable();
            while (demotingThread != null) {
                deadline.await(space.changed, this + " waiting for its demotion to end before release");
            }
            checkReleasable();
            if (mode != LockMode.UN) {
                demote(LockMode.UN, false);
            }
            released = true;
            space.resource(name).holders.remove(this);
            space.forgetIfIdle(name);
            manager.forget(this);
            space.changed.signalAll();
        } finally {
            space.mutex.unlock();
        }
    }

    /**
     * The first use, by {@link InProcessLockManager#acquire}: registers this holder and obtains
     * {@code wanted}; on failure unregisters it again. Caller holds the mutex once.
     */
    void acquire(LockMode wanted, Deadline deadline) throws IOException {
        InProcessLockSpace.Resource resource = space.resource(name);
        resource.holders.add(this);
        boolean granted = false;
        try {
            obtain(wanted, deadline);
            granted = true;
        } finally {
            if (!granted) {
                released = true;
                resource.holders.remove(this);
                space.forgetIfIdle(name);
            }
        }
    }

    /**
     * The node died: this holder is gone without its callbacks (nothing of the node is synced) and
     * without waiting for its uses; later calls on it fail as on a released handle. Caller holds the mutex.
     */
    void dropForDeadNode() {
        if (released) {
            return;
        }
        released = true;
        mode = LockMode.UN;
        uses.clear();
        space.resource(name).holders.remove(this);
        space.forgetIfIdle(name);
    }

    /** @return whether a use is in progress; caller holds the mutex */
    boolean isHeld() {
        return uses.total() > 0;
    }

    /** @return whether {@link #release} completed; caller holds the mutex */
    boolean isReleased() {
        return released;
    }

    /**
     * Waits for this request's turn in the name's queue, demotes every holder in the way (after its
     * uses ended), then grants {@code wanted} to this holder and starts one use. Caller holds the
     * mutex exactly once.
     */
    private void obtain(LockMode wanted, Deadline deadline) throws IOException {
        InProcessLockSpace.Resource resource = space.resource(name);
        Object ticket = new Object();
        resource.queue.addLast(ticket);
        boolean wasHead = false;
        try {
            while (true) {
                if (resource.queue.peekFirst() != ticket) {
                    deadline.await(space.changed, this + " waiting in the queue for " + wanted);
                    continue;
                }
                wasHead = true;
                InProcessLockHandle victim = inTheWay(resource, wanted);
                if (victim == null && demotingThread == null) {
                    checkUsable();
                    uses.start(wanted);
                    if (mode.covers(wanted)) {   // another use of this holder got it meanwhile
                        manager.countCachedHold();
                    } else {
                        GlockStateChangeEvent.emit(manager.nodeName(), name, mode, wanted);
                        GlockPromoteEvent.emit(manager.nodeName(), name, wanted, deadline.elapsedNanos());
                        mode = wanted;
                        manager.countAcquisition();
                    }
                    return;
                }
                InProcessLockHandle busy = victim == null ? this : victim;
                if (busy.demotingThread != null) {
                    deadline.await(space.changed, this + " waiting for " + busy + " to finish its callbacks");
                } else if (busy == this ? usesInTheWay(wanted) : busy.uses.total() > 0) {
                    if (!busy.demoteWanted && busy != this) {
                        GlockDemoteRqEvent.emit(busy.manager.nodeName(), name, busy.mode, demoteTarget(busy, wanted),
                                busy.manager != manager);
                    }
                    busy.demoteWanted = true;
                    deadline.await(space.changed, this + " waiting for the uses of " + busy + " to end");
                } else {
                    LockMode target = demoteTarget(busy, wanted);
                    GlockDemoteRqEvent.emit(busy.manager.nodeName(), name, busy.mode, target, busy.manager != manager);
                    busy.demote(target, true);
                }
            }
        } finally {
            resource.queue.remove(ticket);
            if (wasHead) {
                for (InProcessLockHandle holder : resource.holders) {
                    holder.demoteWanted = false;
                }
            }
            space.changed.signalAll();
        }
    }

    /**
     * @return the holder whose mode must change before {@code wanted} can be granted to this one, or
     *     null: another holder with an incompatible mode, or this one if its mode does not cover
     *     {@code wanted} and going from it to {@code wanted} would need its cache dropped
     *     ({@code SH} to {@code DF}) or another thread's use
     *     in progress ended first ({@link #usesInTheWay})
     */
    private InProcessLockHandle inTheWay(InProcessLockSpace.Resource resource, LockMode wanted) {
        for (InProcessLockHandle holder : resource.holders) {
            if (holder == this) {
                // a mode that covers wanted (granted to another thread of this node while the request
                // queued: EX for a DF request) needs no change; dropping it would sync and invalidate
                // under that thread's use in progress
                boolean dropsCache = mode.allowsCaching() && !wanted.allowsCaching();
                if (!mode.covers(wanted) && (dropsCache || usesInTheWay(wanted))) {
                    return this;
                }
            } else if (!holder.mode.compatibleWith(wanted)) {
                return holder;
            }
        }
        return null;
    }

    /**
     * Runs this holder's callbacks for the transition to {@code target} with the mutex released, then
     * sets the mode. Caller holds the mutex exactly once; this holder has no callbacks running, and no
     * use in progress but those of threads waiting for this very change (its own request's thread, or
     * one that asked for a mode inside a use).
     *
     * @param byRequest whether another request caused it (a demotion), else a release
     * @throws DemoteFailedException if a callback threw; the mode is unchanged
     */
    private void demote(LockMode target, boolean byRequest) throws IOException {
        if (space.mutex.getHoldCount() != 1) {
            throw new IllegalStateException("demote callbacks of " + this + " would run under the lock table's mutex");
        }
        LockMode from = mode;
        demotingThread = Thread.currentThread();
        space.mutex.unlock();
        long pages = 0;
        boolean done = false;
        Exception failure = null;
        try {
            pages = runCallbacks(from, target);
            done = true;
        } catch (IOException | RuntimeException e) {
            failure = e;
        } finally {
            space.mutex.lock();
            demotingThread = null;
            demoteWanted = false;
            if (done) {
                GlockStateChangeEvent.emit(manager.nodeName(), name, mode, target);
                mode = target;
                manager.countTransition(byRequest, pages);
            }
            space.changed.signalAll();
        }
        if (failure != null) {
            throw new DemoteFailedException(this + ": the callbacks for " + from + " to " + target + " failed; the"
                    + " holder keeps " + from, failure);
        }
    }

    /**
     * @return whether this holder's mode must not change to {@code wanted} yet: it does not cover
     *     {@code wanted}, and another thread that does not itself wait for a change has a use in progress
     *     that {@code wanted} does not cover (SH to DF, DF to SH); caller holds the mutex
     */
    private boolean usesInTheWay(LockMode wanted) {
        return !mode.covers(wanted) && uses.othersNotCovered(wanted);
    }

    /** @return the mode {@code busy} goes down to so that this holder may have {@code wanted} */
    private LockMode demoteTarget(InProcessLockHandle busy, LockMode wanted) {
        boolean toShared = busy != this && busy.mode == LockMode.EX && wanted == LockMode.SH;
        return toShared ? LockMode.SH : LockMode.UN;
    }

    private long runCallbacks(LockMode from, LockMode target) throws IOException {
        return DemoteCallbacks.transition(callbacks, name, from, target, true);
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
        return "glock " + name + " of " + manager.nodeName();
    }
}
