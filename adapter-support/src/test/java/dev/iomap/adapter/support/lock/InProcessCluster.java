package dev.iomap.adapter.support.lock;

import dev.iomap.api.FileSystemShutdownException;
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
 * shared {@link InProcessLockSpace} and the lowest free journal slot, freed again when it leaves. A node
 * cannot lose the cluster by itself; a test kills one with {@link #kill} (its fence trips, a surviving
 * node replays its journal, then its glocks are dropped). A test fixture, shipped in adapter-support's
 * test jar only (the modules that test cluster nodes depend on it with {@code <type>test-jar</type>});
 * one instance per filesystem. Thread-safe.
 */
public final class InProcessCluster implements ClusterJoin {
    private final InProcessLockSpace space = new InProcessLockSpace();
    private final BitSet slots = new BitSet();
    private final AtomicInteger joined = new AtomicInteger();
    /** The joined nodes by slot. Guarded by {@code slots}. */
    private final java.util.Map<Integer, Node> members = new java.util.HashMap<>();

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
        Node node = new Node(slot, manager, recovery);
        synchronized (slots) {
            members.put(slot, node);
        }
        return node;
    }

    /**
     * Kills the node in {@code slot}, as a power cut of its machine would, in the order a real cluster
     * recovers: its fence trips (every later {@code checkWrite} of it fails with
     * {@link FileSystemShutdownException}), another joined node's replay recovers its journal, then its
     * glocks are dropped without callbacks (waiting requests of other nodes are granted) and its slot is
     * freed. The dead node's mount is left as it is: its page cache is never written back through the
     * cluster (its writes are fenced).
     *
     * @param slot the journal slot of a joined node
     * @throws IllegalArgumentException if no node is in {@code slot}
     * @throws IllegalStateException if no other node is joined to recover it
     * @throws IOException if the replay failed; the node stays fenced and holds its glocks
     */
    public void kill(int slot) throws IOException {
        Node dead;
        Node survivor;
        synchronized (slots) {
            dead = members.get(slot);
            if (dead == null) {
                throw new IllegalArgumentException("no node is joined in journal slot " + slot);
            }
            survivor = members.values().stream().filter(n -> n != dead).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no other node is joined to recover slot " + slot));
            dead.fenced = true;
        }
        survivor.recovery.replay(slot);
        dead.manager.die();
        dead.close();
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
        private final JournalReplay recovery;
        private volatile boolean fenced;
        private boolean left;

        Node(int slot, InProcessLockManager manager, JournalReplay recovery) {
            this.slot = slot;
            this.manager = manager;
            this.recovery = recovery;
        }

        @Override
        public LockManager lockManager() {
            return manager;
        }

        @Override
        public int journal() {
            return slot;
        }

        /** @throws FileSystemShutdownException once {@link #kill} killed this node */
        @Override
        public void checkWrite() throws FileSystemShutdownException {
            if (fenced) {
                throw new FileSystemShutdownException(this + " was killed: it writes nothing more to the shared "
                        + "device; unmount it");
            }
        }

        @Override
        public void close() {
            synchronized (slots) {
                if (!left) {
                    left = true;
                    slots.clear(slot);
                    members.remove(slot);
                }
            }
        }

        @Override
        public String toString() {
            return manager.nodeName() + " (journal " + slot + ")";
        }
    }
}
