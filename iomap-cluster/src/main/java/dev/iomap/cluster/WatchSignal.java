package dev.iomap.cluster;

import dev.iomap.spi.lock.LockTimeoutException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * What one lock request waits on: every ZooKeeper watch the request sets (on its predecessor in the
 * queue, on the holders, on the demote requests it made) bumps one counter, so a wait that starts
 * from the count it last saw misses no event, whichever watch of whichever earlier iteration fired.
 * Remembers whether a watched znode's data changed (a holder reporting failed callbacks).
 *
 * <p>A wait also ends when the node's lease ends or its fence trips (see {@link Fence}): a request
 * waiting on other nodes while this node lost ZooKeeper fails then, typed, instead of waiting for its
 * whole lock timeout for events that cannot come.
 */
final class WatchSignal implements Watcher {
    private final Fence fence;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition bumped = lock.newCondition();
    private long events;
    private boolean dataChanged;

    /** @param fence the node's fence: a wait ends with its error once the lease is over or it tripped */
    WatchSignal(Fence fence) {
        this.fence = fence;
    }

    @Override
    public void process(WatchedEvent event) {
        lock.lock();
        try {
            events++;
            if (event.getType() == Event.EventType.NodeDataChanged) {
                dataChanged = true;
            }
            bumped.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** @return the events so far: pass it to {@link #await} after setting the watches */
    long events() {
        lock.lock();
        try {
            return events;
        } finally {
            lock.unlock();
        }
    }

    /** @return whether a data change was seen since the last call (and clears it) */
    boolean takeDataChanged() {
        lock.lock();
        try {
            boolean changed = dataChanged;
            dataChanged = false;
            return changed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until an event after the {@code seen}th arrives.
     *
     * @throws LeaseExpiredException if the node's lease ends first
     * @throws NodeFencedException if the node's fence trips first
     * @throws LockTimeoutException if the deadline passes first
     * @throws InterruptedIOException if interrupted (the interrupt status is set again)
     */
    void await(long seen, ZkDeadline deadline, String what) throws IOException {
        lock.lock();
        try {
            while (events == seen) {
                fence.check();
                long remaining = deadline.remainingNanos();
                if (remaining <= 0) {
                    throw new LockTimeoutException("timed out: " + what);
                }
                long wait = Math.min(remaining, TimeUnit.SECONDS.toNanos(1));
                bumped.awaitNanos(Math.max(1, Math.min(wait, fence.leaseRemainingNanos())));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException interrupted = new InterruptedIOException("interrupted: " + what);
            interrupted.initCause(e);
            throw interrupted;
        } finally {
            lock.unlock();
        }
    }
}
