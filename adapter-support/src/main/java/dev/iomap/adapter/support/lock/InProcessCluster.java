package dev.iomap.adapter.support.lock;

import dev.iomap.api.IomapException;
import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.ClusterJoin;
import dev.iomap.spi.lock.LockManager;
import java.io.IOException;
import java.util.BitSet;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A cluster of nodes in one JVM: every node that joins gets an {@link InProcessLockManager} over one
 * shared {@link InProcessLockSpace} and the lowest free journal slot, freed again when it leaves. There is
 * no fence (a node cannot lose the cluster) and no recovery (a node cannot die without its JVM). For
 * tests and for trying several mounts of one image in one process; one instance per filesystem.
 * Thread-safe.
 */
public final class InProcessCluster implements ClusterJoin {
    private final InProcessLockSpace space = new InProcessLockSpace();
    private final BitSet slots = new BitSet();
    private final AtomicInteger joined = new AtomicInteger();

    /** @return the lock space the nodes share (another manager over it acts as one more node) */
    public InProcessLockSpace lockSpace() {
        return space;
    }

    /**
     * Joins: the lowest free slot, a lock manager named {@code node-<n>} (n counts joins from 1).
     *
     * @throws IomapException if every one of {@code journals} slots is taken
     */
    @Override
    public ClusterContext join(String filesystemId, int journals, JournalReplay recovery) throws IOException {
        Objects.requireNonNull(filesystemId, "filesystemId");
        Objects.requireNonNull(recovery, "recovery");
        int slot;
        synchronized (slots) {
            slot = slots.nextClearBit(0);
            if (slot >= journals) {
                throw new IomapException("all " + journals + " journals of " + filesystemId
                        + " are in use by mounted nodes");
            }
            slots.set(slot);
        }
        InProcessLockManager manager = new InProcessLockManager(space, "node-" + joined.incrementAndGet(), false);
        return new Node(slot, manager);
    }

    /** @return how many nodes are joined now */
    public int nodes() {
        synchronized (slots) {
            return slots.cardinality();
        }
    }

    private final class Node implements ClusterContext {
        private final int slot;
        private final InProcessLockManager manager;
        private boolean left;

        Node(int slot, InProcessLockManager manager) {
            this.slot = slot;
            this.manager = manager;
        }

        @Override
        public LockManager lockManager() {
            return manager;
        }

        @Override
        public int journal() {
            return slot;
        }

        /** Never fenced: a node of one JVM cannot lose its cluster. */
        @Override
        public void checkWrite() {
        }

        @Override
        public void close() {
            synchronized (slots) {
                if (!left) {
                    left = true;
                    slots.clear(slot);
                }
            }
        }

        @Override
        public String toString() {
            return manager.nodeName() + " (journal " + slot + ")";
        }
    }
}
