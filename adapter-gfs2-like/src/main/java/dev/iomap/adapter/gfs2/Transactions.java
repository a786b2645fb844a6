package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.Journal;
import dev.iomap.spi.IomapInode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * The running transaction's life: every change of a mount's metadata joins it under {@link #meta};
 * {@link #commit()} writes the data of ordered inodes back, logs every dirtied block in one journal
 * transaction and commits it (jbd2's commit with gfs2's ordered write list).
 *
 * <p>Locks, outermost first: {@link #commitLock} (one commit at a time), {@link #gate} (held shared
 * by a write from its {@code begin} to its {@code end}, so new blocks never join a commit whose data
 * write-out already ran; held exclusively by a commit, as jbd2's {@code t_updates} drain), then
 * {@link #meta}. A commit calls {@link IomapInode#writeAndWait} holding the gate but not {@code meta}:
 * writeback maps blocks under {@code meta} only.
 */
final class Transactions {
    /** Guards every metadata structure of the mount. */
    final ReentrantLock meta = new ReentrantLock();
    /** Shared by a write between begin and end; exclusive for a commit. */
    final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
    private final ReentrantLock commitLock = new ReentrantLock();
    private final Volume volume;
    private final long limit;
    private final AtomicLong commits = new AtomicLong();
    private final AtomicLong checkpointsForReuse = new AtomicLong();

    Transactions(Volume volume) {
        this.volume = volume;
        this.limit = Math.max(8, volume.journal.maxTransactionBlocks() / 3);
    }

    /**
     * Commits first if the running transaction is getting too big for the log. Call holding neither
     * the gate nor {@code meta}.
     *
     * @throws IOException if the commit fails
     */
    void makeRoom() throws IOException {
        int size;
        meta.lock();
        try {
            size = volume.dirty.size();
        } finally {
            meta.unlock();
        }
        if (size > limit) {
            commit();
        }
    }

    /**
     * Commits the running transaction: writes back and waits the data of every ordered inode, then
     * flushes the device (so the ordered data is durable before the commit record can be), logs the
     * newest image of every dirty block and commits (one journal flush). Blocks freed by the
     * transaction become reusable afterwards; if any of them had a logged image, the journal is
     * checkpointed first so that no replay ever writes that image over the block's next use. Does
     * nothing if nothing changed. Call holding neither the gate nor {@code meta}.
     *
     * @throws IOException if the journal fails
     */
    void commit() throws IOException {
        commitLock.lock();
        try {
            gate.writeLock().lock();
            try {
                List<IomapInode> inodes;
                meta.lock();
                try {
                    inodes = new ArrayList<>(volume.ordered.values());
                    volume.ordered.clear();
                } finally {
                    meta.unlock();
                }
                for (IomapInode inode : inodes) {
                    inode.writeAndWait(0, Long.MAX_VALUE);
                }
                meta.lock();
                try {
                    commitLocked();
                } finally {
                    meta.unlock();
                }
            } finally {
                gate.writeLock().unlock();
            }
        } finally {
            commitLock.unlock();
        }
    }

    private void commitLocked() throws IOException {
        List<Long> freed = volume.pendingFrees();
        if (volume.dirty.isEmpty() && freed.isEmpty()) {
            return;
        }
        volume.device.flush();
        Journal.Transaction tx = volume.journal.begin();
        try {
            for (Map.Entry<Long, Supplier<ByteBuffer>> e : volume.dirty.entrySet()) {
                tx.log(e.getKey(), e.getValue().get());
            }
            tx.commit();
        } finally {
            tx.close();
        }
        volume.dirty.clear();
        volume.newBlocks.clear();
        commits.incrementAndGet();
        boolean logged = false;
        for (long b : freed) {
            logged |= volume.journal.latest(b).isPresent();
        }
        if (logged) {
            volume.journal.checkpoint();
            checkpointsForReuse.incrementAndGet();
        }
        volume.releasePendingFrees();
    }

    /** @return commits that wrote something */
    long commits() {
        return commits.get();
    }

    /** @return checkpoints forced so that freed, logged blocks could be reused */
    long checkpointsForReuse() {
        return checkpointsForReuse.get();
    }
}
