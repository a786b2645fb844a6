package dev.iomap.adapter.support.lock;

import dev.iomap.spi.lock.LockName;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock table that several {@link InProcessLockManager}s share, as nodes share one DLM lock space:
 * for every name, its holders and its queue of waiting requests. Create one per shared filesystem
 * and one manager per node (mount) over it; holders of different managers contend as different nodes
 * would.
 *
 * <p>Thread-safe: one mutex guards the whole table and one condition is signalled on every change
 * (the table is small and its critical sections short; demote callbacks run outside the mutex).
 */
public final class InProcessLockSpace {
    /** Guards every field of the table, of every {@link Resource} and of every handle's lock state. */
    final ReentrantLock mutex = new ReentrantLock();
    /** Signalled (all) whenever a mode, a hold count, a flag or a queue changes. */
    final Condition changed = mutex.newCondition();
    private final Map<LockName, Resource> resources = new HashMap<>();

    /** Creates an empty lock space. */
    public InProcessLockSpace() {
    }

    /**
     * The holders and waiting requests of one name. Guarded by {@link #mutex}.
     */
    static final class Resource {
        final List<InProcessLockHandle> holders = new ArrayList<>();
        final ArrayDeque<Object> queue = new ArrayDeque<>();
    }

    /** @return the resource of {@code name}, created if missing; caller holds {@link #mutex} */
    Resource resource(LockName name) {
        return resources.computeIfAbsent(name, key -> new Resource());
    }

    /** Forgets {@code name} if it has no holder and no waiter; caller holds {@link #mutex}. */
    void forgetIfIdle(LockName name) {
        Resource resource = resources.get(name);
        if (resource != null && resource.holders.isEmpty() && resource.queue.isEmpty()) {
            resources.remove(name);
        }
    }

    /** @return how many names have a holder or a waiter (for tests: released names are forgotten) */
    public int activeNames() {
        mutex.lock();
        try {
            return resources.size();
        } finally {
            mutex.unlock();
        }
    }
}
