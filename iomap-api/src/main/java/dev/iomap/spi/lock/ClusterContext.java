package dev.iomap.spi.lock;

import java.io.IOException;

/**
 * What a mount that shares its device with other nodes gets from the cluster it joined: its glock
 * manager, the journal slot it alone writes, and its write fence. Made by a {@link ClusterJoin} (a
 * ZooKeeper membership, or an in-process cluster in tests); an adapter depends on this interface only.
 *
 * <p>The mount owns the context from {@link ClusterJoin#join} on: it closes the {@link #lockManager()}
 * when it releases its glocks at unmount, then {@link #close()}s the context (leaving the cluster, which
 * frees the slot). Thread-safe.
 */
public interface ClusterContext extends AutoCloseable {

    /** @return this node's glock manager, shared with no other mount */
    LockManager lockManager();

    /** @return this node's journal slot: the only journal it replays at mount and writes */
    int journal();

    /**
     * The self-fence, checked right before every write the mount issues to the shared device (its
     * journal, its metadata, its data) and again once the write completed: while the node may be
     * declared dead by the others, it must not write to the shared device.
     *
     * @throws IOException a {@link dev.iomap.api.FileSystemShutdownException} saying why, once fenced
     *     (a fence never heals: the mount must be unmounted and mounted again); or another
     *     {@link IOException} while the node's lease on its membership is over, which may end (the
     *     operation fails, the mount goes on)
     */
    void checkWrite() throws IOException;

    /**
     * The cluster's counters of this node, by name, since it joined: for example the dead nodes'
     * journals it recovered ({@code recovery.journals}) and the transactions it replayed for them. A
     * snapshot; the adapter reports them with its own counters. This default: none.
     *
     * @return counter name to value, in a stable order
     */
    default java.util.Map<String, Long> counters() {
        return java.util.Map.of();
    }

    /**
     * Leaves the cluster after the mount released every glock and checkpointed its journal (a clean
     * leave: nobody replays this slot). Idempotent.
     *
     * @throws IOException if the cluster could not be told
     */
    @Override
    void close() throws IOException;
}
