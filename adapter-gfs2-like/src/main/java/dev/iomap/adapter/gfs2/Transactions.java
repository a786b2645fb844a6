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
    /** Blocks a small metadata change may dirty. */
    static final long SMALL = 16;
    private final long limit;
    /** Blocks reserved by operations in progress; guarded by {@code meta}. */
    private long reserved;
    private final AtomicLong commits = new AtomicLong();
    private final AtomicLong dataCommits = new AtomicLong();

    Transactions(Volume volume) {
        this.volume = volume;
        this.limit = Math.max(8, volume.journal.maxTransactionBlocks() / 3);
    }

    /**
     * Reserves room in the running transaction for {@code want} more blocks, committing first when it
     * would not fit (jbd2's {@code start_this_handle}). Release with {@link #release}. Call holding
     * neither the gate nor {@code meta}.
     *
     * @param want blocks the operation may log
     * @throws IOException if a commit fails
     */
    void makeRoom(long want) throws IOException {
        while (true) {
            meta.lock();
            try {
                if (volume.dirty.size() + reserved + want <= limit || (volume.dirty.isEmpty() && reserved == 0)) {
                    reserved += want;
                    return;
                }
            } finally {
                meta.unlock();
            }
            commit();
        }
    }

    /** Gives back a reservation of {@link #makeRoom}; caller holds {@code meta} or not. */
    void release(long want) {
        meta.lock();
        try {
            reserved -= want;
        } finally {
            meta.unlock();
        }
    }

    /** Makes room for a small metadata change and releases the reservation at once. */
    void makeRoom() throws IOException {
        makeRoom(SMALL);
        release(SMALL);
    }

    /** @return the most blocks one write mapping of a journaled file may cover */
    long jdataMappingBlocks() {
        return Math.max(1, limit / 8);
    }

    /**
     * Commits the running transaction: writes back and waits the data of every ordered inode, then
     * flushes the device (so the ordered data is durable before the commit record can be), logs the
     * newest image of every dirty block and commits (one journal flush). A freed block with a
     * logged image (metadata, or journaled data) is revoked in the same commit, so neither replay nor
     * checkpoint writes that image over the block's next use; blocks freed by the transaction become
     * reusable only afterwards. Does nothing if nothing changed. Call holding neither the gate nor {@code meta}.
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
            for (long b : freed) {
                if (volume.journal.latest(b).isPresent()) {
                    tx.revoke(b);
                }
            }
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
        volume.releasePendingFrees();
    }

    /**
     * Journals the bytes of a jdata ioend before its home write (gfs2 writes the log first): every block
     * whose bytes are not what the journal already holds committed is logged, in a transaction of its
     * own committed now, and leaves the running transaction. Runs under {@code meta}, as commits do, so
     * the newest image always commits last.
     *
     * @param blocks device block numbers
     * @param bytes each block's bytes
     * @throws IOException if the journal fails
     */
    void journalData(long[] blocks, byte[][] bytes) throws IOException {
        meta.lock();
        try {
            Journal.Transaction tx = volume.journal.begin();
            try {
                for (int i = 0; i < blocks.length; i++) {
                    byte[] known = volume.jdataImages.get(blocks[i]);
                    boolean committed = known != null && !volume.dirty.containsKey(blocks[i])
                            && java.util.Arrays.equals(known, bytes[i]);
                    if (!committed) {
                        tx.log(blocks[i], ByteBuffer.wrap(bytes[i]));
                    }
                }
                if (tx.blocks() > 0) {
                    tx.commit();
                    dataCommits.incrementAndGet();
                }
            } finally {
                tx.close();
            }
            for (int i = 0; i < blocks.length; i++) {
                volume.jdataImages.put(blocks[i], bytes[i]);
                volume.dirty.remove(blocks[i]);
            }
        } finally {
            meta.unlock();
        }
    }

    /** @return transactions committed by jdata writeback */
    long dataCommits() {
        return dataCommits.get();
    }

    /** @return commits that wrote something */
    long commits() {
        return commits.get();
    }

}
