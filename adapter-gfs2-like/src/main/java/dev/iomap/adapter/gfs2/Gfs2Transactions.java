package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.Journal;
import dev.iomap.api.FileSystemShutdownException;
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
 *
 * <p>Size: no operation builds a transaction bigger than the log. Each operation reserves what it may
 * dirty ({@link #makeRoom}), and long ones (truncate, punch, freeing a file, fallocate) work in steps of
 * at most {@link #stepBlocks} blocks, each leaving the dinode consistent, with room made (a commit if
 * needed) between steps, as GFS2's {@code punch_hole} and {@code fallocate} do. Should the journaled
 * data blocks of the running transaction still outgrow the log, a commit first logs them in data-only
 * transactions of their own (as {@link #journalData} does at writeback) before the metadata.
 *
 * <p>Failure policy: a failed write-back of ordered data does not fail the commit, as in GFS2 (whose
 * {@code gfs2_ordered_wait} leaves the error in the mapping) and jbd2 (which warns and commits unless
 * mounted {@code data_err=abort}): the error is recorded on that file's mapping and reported by its
 * next fsync (once per open file), the blocks the failed write allocated in the running transaction are
 * freed again ({@link Gfs2IomapOps#ioendCompleted}, so the committed file reads zeroes there, never a
 * former owner's bytes), and the transaction commits. A commit whose device flush fails (before it
 * writes to the journal) changes nothing: the running transaction stays as it was, the error goes to
 * the caller (an fsync fails), and the next commit tries again. A failure that
 * aborts the journal (a journal write; see {@link Journal}) shuts the mount down, as jbd2's abort
 * does: every later {@link #makeRoom}, {@link #commit} and write of the mount throws
 * {@link FileSystemShutdownException} naming the first failure, so nothing is written on top of a
 * half-committed state; the journal replays the last committed transaction at the next mount.
 */
final class Gfs2Transactions {
    /** Guards every metadata structure of the mount. */
    final ReentrantLock meta = new ReentrantLock();
    /** Shared by a write between begin and end; exclusive for a commit. */
    final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
    private final ReentrantLock commitLock = new ReentrantLock();
    private final Gfs2Volume volume;
    /** Blocks a small metadata change may dirty. */
    static final long SMALL = 16;
    private final long limit;
    /** Blocks reserved by operations in progress; guarded by {@code meta}. */
    private long reserved;
    private final AtomicLong commits = new AtomicLong();
    private final AtomicLong dataCommits = new AtomicLong();
    /** The first commit failure, after which the mount is shut down; null while healthy. */
    private volatile IOException failure;

    Gfs2Transactions(Gfs2Volume volume) {
        this.volume = volume;
        this.limit = Math.max(8, volume.journal.maxTransactionBlocks() / 3);
    }

    /**
     * Reserves room in the running transaction for {@code want} more blocks, committing first when it
     * would not fit (jbd2's {@code start_this_handle}), or when the blocks the running transaction
     * freed are needed for the operation's allocations ({@link Gfs2Volume#needsFreedBlocks}: they are
     * reusable only once it commits). Release with {@link #release}. Call holding neither the gate nor
     * {@code meta}.
     *
     * @param want blocks the operation may log (and about as many it may allocate)
     * @throws IOException if a commit fails
     */
    void makeRoom(long want) throws IOException {
        checkHealthy();
        boolean committedForSpace = false;
        while (true) {
            meta.lock();
            try {
                boolean fits = volume.dirty.size() + reserved + want <= limit
                        || (volume.dirty.isEmpty() && reserved == 0);
                if (fits && (committedForSpace || !volume.needsFreedBlocks(want))) {
                    reserved += want;
                    return;
                }
                committedForSpace = fits;
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

    /**
     * @return the most blocks one step of a long operation may allocate or free: it then dirties at
     *     most about as many blocks (data, bitmaps, indirect blocks; revokes take far less), which a
     *     reservation of {@link #stepReservation} covers
     */
    long stepBlocks() {
        return Math.max(1, limit / 2);
    }

    /** @return the reservation a step of {@link #stepBlocks} blocks makes */
    long stepReservation() {
        return stepBlocks() + SMALL;
    }

    /**
     * Fails if an earlier commit failed and shut the mount down.
     *
     * @throws FileSystemShutdownException naming the failure
     */
    void checkHealthy() throws FileSystemShutdownException {
        IOException f = failure;
        if (f != null) {
            throw shutdown(f);
        }
    }

    /**
     * What a failed commit throws: the error itself if the journal still works (nothing was committed;
     * the next commit retries), else the shutdown it caused.
     */
    private IOException failed(Exception e) {
        IOException cause = e instanceof IOException io ? io : new IOException(e.toString(), e);
        if (volume.journal.abortCause().isEmpty()) {
            return cause;
        }
        failure = volume.journal.abortCause().get();
        return shutdown(failure);
    }

    private static FileSystemShutdownException shutdown(IOException cause) {
        FileSystemShutdownException e = new FileSystemShutdownException(
                "gfs2-like: a journal commit failed and the mount shut down: " + cause.getMessage());
        e.initCause(cause);
        return e;
    }

    /** @return the most blocks one write mapping of a journaled file may cover */
    long jdataMappingBlocks() {
        return Math.max(1, limit / 8);
    }

    /**
     * Commits the running transaction (or shuts the mount down if that fails: see the class comment):
     * writes back and waits the data of every ordered inode (a failed write-back is that file's error,
     * for its next fsync, and does not stop the commit), then
     * flushes the device (so the ordered data is durable before the commit record can be), logs the
     * newest image of every dirty block and commits (one journal flush). A freed block with a
     * logged image (metadata, or journaled data) is revoked in the same commit, so neither replay nor
     * checkpoint writes that image over the block's next use; blocks freed by the transaction become
     * reusable only afterwards. Does nothing if nothing changed. Call holding neither the gate nor {@code meta}.
     *
     * @throws FileSystemShutdownException if this or an earlier commit aborted the journal (the cause is
     *     attached)
     * @throws IOException if flushing the device failed (nothing was committed; the next commit retries)
     */
    void commit() throws IOException {
        commitLock.lock();
        try {
            checkHealthy();
            gate.writeLock().lock();
            try {
                commitGated();
            } catch (IOException | RuntimeException e) {
                throw failed(e);
            } finally {
                gate.writeLock().unlock();
            }
        } finally {
            commitLock.unlock();
        }
    }

    /** The commit under the gate: the ordered data, then the journal transaction. */
    private void commitGated() throws IOException {
        List<IomapInode> inodes;
        meta.lock();
        try {
            inodes = new ArrayList<>(volume.ordered.values());
            volume.ordered.clear();
        } finally {
            meta.unlock();
        }
        for (IomapInode inode : inodes) {
            // Records a failed write in the inode's mapping (for its fsync) and frees the blocks it
            // allocated here: the commit goes ahead without that data.
            inode.writeAndWait(0, Long.MAX_VALUE);
        }
        meta.lock();
        try {
            commitLocked();
        } finally {
            meta.unlock();
        }
    }

    private void commitLocked() throws IOException {
        List<Long> freed = volume.pendingFrees();
        if (volume.dirty.isEmpty() && freed.isEmpty()) {
            return;
        }
        volume.device.flush();
        splitData(freed.size());
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
     * If the dirty blocks would not fit one transaction, logs the journaled data blocks among them in
     * data-only transactions of their own first (they need not be atomic with the metadata; the
     * metadata that points at them commits after), leaving the metadata for the caller's transaction.
     */
    private void splitData(int revokes) throws IOException {
        long max = volume.journal.maxTransactionBlocks();
        long revokeBlocks = Math.ceilDiv((long) revokes, Math.max(1, volume.journal.maxTransactionRevokes() / max));
        if (volume.dirty.size() + revokeBlocks <= max) {
            return;
        }
        List<Long> data = new ArrayList<>();
        for (Map.Entry<Long, Supplier<ByteBuffer>> e : volume.dirty.entrySet()) {
            if (e.getValue() instanceof Gfs2Volume.DataImage) {
                data.add(e.getKey());
            }
        }
        long chunk = Math.max(1, max / 2);
        for (int from = 0; from < data.size(); from += (int) chunk) {
            Journal.Transaction tx = volume.journal.begin();
            try {
                for (long b : data.subList(from, (int) Math.min(data.size(), from + chunk))) {
                    tx.log(b, volume.dirty.get(b).get());
                }
                tx.commit();
            } finally {
                tx.close();
            }
            dataCommits.incrementAndGet();
        }
        for (long b : data) {
            volume.dirty.remove(b);
        }
    }

    /**
     * Journals the bytes of a jdata ioend before its home write (gfs2 writes the log first): every block
     * whose bytes are not what the journal already holds committed ({@link Journal#latest}) is logged, in
     * transactions of their own (as many as the log needs: an ioend may be larger than the log) committed
     * now, and leaves the running transaction. A block the journal
     * holds no image of (never logged, or checkpointed since) is logged too: what this adapter keeps of
     * journaled data is the running transaction and the journal's overlay, both bounded by the log, never
     * a copy of every journaled block. Runs under {@code meta}, as commits do, so the newest image always
     * commits last.
     *
     * @param blocks device block numbers
     * @param bytes each block's bytes
     * @throws IOException if the journal fails: a {@link FileSystemShutdownException}, the mount is shut down
     */
    void journalData(long[] blocks, byte[][] bytes) throws IOException {
        checkHealthy();
        meta.lock();
        try {
            long max = volume.journal.maxTransactionBlocks();
            Journal.Transaction tx = volume.journal.begin();
            try {
                for (int i = 0; i < blocks.length; i++) {
                    if (committed(blocks[i], bytes[i])) {
                        continue;
                    }
                    if (tx.blocks() == max) {
                        commitData(tx);
                        tx = volume.journal.begin();
                    }
                    tx.log(blocks[i], ByteBuffer.wrap(bytes[i]));
                }
                commitData(tx);
            } catch (IOException | RuntimeException e) {
                throw failed(e);
            } finally {
                tx.close();
            }
            for (long block : blocks) {
                volume.dirty.remove(block);
            }
        } finally {
            meta.unlock();
        }
    }

    /** Commits a transaction of journaled data blocks, if it logged any. */
    private void commitData(Journal.Transaction tx) throws IOException {
        if (tx.blocks() > 0) {
            tx.commit();
            dataCommits.incrementAndGet();
        }
    }

    /** @return whether {@code bytes} are the committed image of {@code block} and no newer one is pending */
    private boolean committed(long block, byte[] bytes) {
        if (volume.dirty.containsKey(block)) {
            return false;
        }
        return volume.journal.latest(block).map(image -> image.equals(ByteBuffer.wrap(bytes))).orElse(false);
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
