package dev.iomap.adapter.support;

import dev.iomap.adapter.support.JournalFormat.Superblock;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceNoSpaceException;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapException;
import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A metadata write-ahead log with physical (whole-block) logging, in the manner of jbd2: a
 * transaction's new block images are written to the log and made durable by one flush at
 * {@link Transaction#commit()}; they reach their home blocks only at {@link #checkpoint()}. After a
 * crash, {@link #replay()} re-applies every transaction whose commit made it to the device.
 *
 * <p><b>Region.</b> The journal owns device blocks {@code [start, start + length)}, {@code length >=}
 * {@value #MIN_LENGTH_BLOCKS}. Block {@code start} is the journal superblock; the other
 * {@code length - 1} blocks are a circular log, position {@code p} being block {@code start + 1 + p}.
 * A transaction is laid out from the head: {@code [descriptor, data...]... [revoke...] commit}, each
 * descriptor listing the home block numbers of the data blocks after it, each revoke block listing
 * revoked block numbers, wrapping from the last position to position 0. Descriptors, revoke blocks
 * and commits are {@link MetadataBlock}s whose sequence number is the transaction's; the commit holds
 * a CRC32C of all the transaction's descriptor, data and revoke blocks, so a transaction torn by a
 * power cut is recognised as incomplete, its revokes as much as its images. Every record carries a
 * journal id chosen at format time, so transactions of an earlier format of the same region are never
 * replayed.
 * Byte layouts are in the module README.
 *
 * <p><b>Durability.</b> {@code commit} writes the transaction and flushes: when it returns, the
 * transaction survives a power cut. The journal superblock (tail position and sequence) is written
 * only by {@code checkpoint}, after the home blocks are written and flushed; the head is not stored
 * but found by replay, which scans from the tail while sequence numbers continue and checksums hold,
 * and stops at the first transaction that does not (the torn tail). A transaction that does not
 * verify while a later one is in the log was damaged, not torn: replay refuses to drop the committed
 * transactions after it. Sequence numbers are never
 * reused: after a replay, numbering resumes {@code length - 1} past where the scan stopped.
 *
 * <p><b>Revokes.</b> A block whose image was logged and which is then freed (a truncate) may be
 * reused and written in place, outside the journal; replaying the old image would then overwrite
 * the new owner's data. {@link Transaction#revoke(long)} prevents that, as jbd2's revoke records do:
 * a revoke committed in transaction {@code s} suppresses, at replay, every image of that block in the
 * transactions with sequence {@code < s}, and at commit removes the block from the overlay, so
 * neither {@link #readBlock} nor a checkpoint uses the old image again. Replay is two passes: the
 * scan reads every complete transaction and records, for each revoked block, the newest sequence
 * revoking it; then the images are applied in log order, skipping each one whose sequence is below
 * its block's newest revoke. The revokes of a torn transaction are ignored like its images. Until
 * the revoking transaction commits, the old image is still current (for readers and checkpoints):
 * the caller must not reuse the block before that commit returns; the natural place for the revoke
 * is the transaction that frees the block.
 *
 * <p><b>Reading metadata.</b> Until a checkpoint, a committed block's home location holds its old
 * contents. Callers must therefore read journaled metadata through {@link #readBlock(long)} (or
 * {@link Transaction#read(long)} inside a transaction), which return the newest committed image from
 * the in-memory overlay ({@link #latest(long)}) and fall back to the home block. Reading the device
 * directly is correct only for blocks never logged, or right after a checkpoint.
 *
 * <p><b>Space.</b> A commit that does not fit in the free part of the log first checkpoints (counted in
 * {@link Stats#forcedCheckpoints()}). A transaction bigger than the whole log is refused with
 * {@link NoSpaceException} when the block that makes it too big is logged or revoked, and nothing is
 * written.
 *
 * <p><b>Life cycle.</b> {@link #format} once (mkfs), then at every mount {@link #open} and
 * {@link #replay()} before anything else ({@link IllegalStateException} otherwise), and
 * {@link #checkpoint()} at unmount so the log is empty. An I/O error during a commit or checkpoint
 * <em>aborts</em> the journal (as jbd2 does): every later commit or checkpoint fails with an
 * {@link IomapException} naming the first error, and the filesystem must be remounted, which replays.
 * Except a write refused because the device's host has no room ({@link DeviceNoSpaceException}: the
 * host filesystem under an image file is full): that commit or checkpoint fails with it and changes
 * nothing the journal goes by (head, tail, sequence numbers, the overlay), as if never tried. What it
 * wrote in the free part of the log is a torn transaction, ignored as after a power cut, and the home
 * blocks it wrote hold images the log still has; so the next commit or checkpoint, once the host has
 * room, simply does it again, and nothing committed before is lost.
 *
 * <p><b>Thread-safety.</b> All methods of {@code Journal} are thread-safe. Commits, checkpoints and
 * replay are serialised by one lock held across their device I/O; reads ({@link #readBlock},
 * {@link #latest}) do not take it, so they never wait for a commit's flush. A {@link Transaction}
 * belongs to one thread.
 * Transactions may be open concurrently; they are applied in commit order, so two transactions that
 * log the same block must be ordered by the caller's own locking (last commit wins).
 */
public final class Journal {
    /** The smallest region: superblock, then room for a descriptor, one data block and a commit. */
    public static final long MIN_LENGTH_BLOCKS = 4;
    /**
     * The largest tail sequence number {@link #open} accepts: far more transactions than a journal
     * commits, and far enough from {@code Long.MAX_VALUE} that the numbering never overflows (a forged
     * sequence near it would wrap to a negative one, which the next open refuses).
     */
    static final long MAX_SEQUENCE = 1L << 62;

    private final BlockDevice device;
    private final int blockSize;
    private final long start;
    private final long length;
    private final long logBlocks;
    private final long journalId;
    private final JournalLog log;
    private final ReentrantLock lock = new ReentrantLock();

    // Guarded by lock, except where noted.
    private long tailPosition;
    private long tailSequence;
    private long headPosition;
    private long nextSequence;
    private long usedBlocks;
    /** Written under the lock, read without it. */
    private volatile boolean replayed;
    private IOException abortCause;
    /**
     * Newest committed, not yet checkpointed image of each block: read-only buffers. Changed under
     * the lock (an entry is removed only after its home block is written), read without it.
     */
    private final Map<Long, ByteBuffer> overlay = new ConcurrentHashMap<>();
    private long transactionsCommitted;
    private long blocksLogged;
    private long revokesLogged;
    private long logBlocksWritten;
    private long checkpoints;
    private long forcedCheckpoints;
    private long blocksCheckpointed;
    private long transactionsReplayed;
    private long blocksReplayed;
    private long imagesRevokedAtReplay;

    private Journal(BlockDevice device, Superblock superblock) {
        this.device = device;
        this.blockSize = device.blockSize();
        this.start = superblock.regionStart();
        this.length = superblock.regionLength();
        this.logBlocks = length - 1;
        this.journalId = superblock.journalId();
        this.log = new JournalLog(device, start, length, journalId);
        this.tailPosition = superblock.tailPosition();
        this.tailSequence = superblock.tailSequence();
        this.headPosition = tailPosition;
        this.nextSequence = tailSequence;
    }

    /**
     * What the journal has done since it was opened, for write-amplification reports.
     *
     * @param transactionsCommitted non-empty transactions committed
     * @param blocksLogged data block images in them
     * @param revokesLogged revoke records in them (one per distinct block revoked per transaction)
     * @param logBlocksWritten log blocks written: data, descriptors, revoke blocks and commits
     * @param checkpoints checkpoints that wrote something, forced ones and replay's included (a
     *     replay always writes the superblock, so it always counts)
     * @param forcedCheckpoints checkpoints forced by a full log
     * @param blocksCheckpointed home blocks written by checkpoints
     * @param transactionsReplayed transactions found and applied by {@link #replay()}
     * @param blocksReplayed block images in them, the revoked ones included
     * @param imagesRevokedAtReplay of those, the images replay skipped because a later transaction
     *     revoked their block
     * @param logCapacityBlocks blocks in the circular log (the region less its superblock)
     * @param logUsedBlocks log blocks holding transactions not yet checkpointed
     */
    public record Stats(long transactionsCommitted, long blocksLogged, long revokesLogged, long logBlocksWritten,
            long checkpoints, long forcedCheckpoints, long blocksCheckpointed, long transactionsReplayed,
            long blocksReplayed, long imagesRevokedAtReplay, long logCapacityBlocks, long logUsedBlocks) {
    }

    /**
     * What one {@link #replay()} found.
     *
     * @param transactions complete transactions applied
     * @param blocks block images in them (a block logged twice counts twice), the revoked ones included
     * @param revokes revoke records in them
     * @param revokedImages of the {@code blocks}, the images not applied because a later transaction
     *     revoked their block
     * @param nextSequence the sequence number the next commit gets
     */
    public record ReplayResult(long transactions, long blocks, long revokes, long revokedImages, long nextSequence) {
    }

    /**
     * Makes an empty journal in {@code [start, start + length)}: writes its superblock (a fresh random
     * journal id, tail at position 0, sequence 1) and flushes. The log blocks are not touched.
     *
     * @param device the device
     * @param start first block of the region
     * @param length blocks in the region, at least {@value #MIN_LENGTH_BLOCKS}
     * @throws InvalidRangeException if the region is too small or not inside the device
     * @throws IOException if the device fails
     */
    public static void format(BlockDevice device, long start, long length) throws IOException {
        format(device, start, length, new SecureRandom().nextLong());
    }

    /**
     * {@link #format(BlockDevice, long, long)} with a given journal id, for reproducible images. Use a
     * different id for every format of the same region, or transactions of the old journal may be
     * replayed into the new filesystem.
     *
     * @param device the device
     * @param start first block of the region
     * @param length blocks in the region
     * @param journalId the id every record will carry
     * @throws IOException as the other form
     */
    public static void format(BlockDevice device, long start, long length, long journalId) throws IOException {
        checkRegion(device, start, length);
        new JournalLog(device, start, length, journalId).writeSuperblock(0, 1);
        device.flush();
    }

    /**
     * Opens the journal in {@code [start, start + length)}, reading and verifying its superblock.
     * Call {@link #replay()} next.
     *
     * @param device the device
     * @param start first block of the region, as given to {@link #format}
     * @param length blocks in the region, as given to {@link #format}
     * @return the journal, not yet replayed
     * @throws InvalidRangeException if the region is too small or not inside the device
     * @throws CorruptFileSystemException if the superblock is damaged, of another version or block
     *     size, describes another region, or its header and tail sequence numbers differ
     * @throws IOException if the device fails
     */
    public static Journal open(BlockDevice device, long start, long length) throws IOException {
        checkRegion(device, start, length);
        MetadataBlock block = MetadataBlock.read(device, start, JournalFormat.SUPERBLOCK_TYPE);
        Superblock superblock = Superblock.decode(block);
        String where = "journal superblock at block " + start;
        if (block.sequence() != superblock.tailSequence()) {
            throw new CorruptFileSystemException(where + ": its header says sequence " + block.sequence()
                    + " and its payload tail sequence " + superblock.tailSequence() + "; they are written equal");
        }
        if (superblock.blockSize() != device.blockSize()) {
            throw new CorruptFileSystemException(where + " was made for " + superblock.blockSize()
                    + "-byte blocks; the device has " + device.blockSize() + "-byte blocks");
        }
        if (superblock.regionStart() != start || superblock.regionLength() != length) {
            throw new CorruptFileSystemException(where + " describes the region [" + superblock.regionStart()
                    + ", +" + superblock.regionLength() + "), not [" + start + ", +" + length + ")");
        }
        if (superblock.tailPosition() < 0 || superblock.tailPosition() >= length - 1
                || superblock.tailSequence() < 1 || superblock.tailSequence() > MAX_SEQUENCE) {
            throw new CorruptFileSystemException(where + ": bad tail position "
                    + superblock.tailPosition() + " or sequence " + superblock.tailSequence());
        }
        return new Journal(device, superblock);
    }

    /**
     * Scans the log from the tail and applies every complete transaction: one whose descriptors,
     * revoke blocks and commit verify, whose sequence number follows the previous one and whose
     * transaction checksum matches, except the images revoked by a later complete transaction (see
     * the class comment). Stops at the first that is not (the torn tail: later transactions are
     * ignored too, and for good: numbering restarts past every sequence number the log could hold), then
     * checkpoints, so the log is empty when this returns. Writes the journal superblock and flushes
     * even when there was nothing to apply. Must be called once after {@link #open}; calling it again
     * is harmless.
     *
     * @return what was applied
     * @throws CorruptFileSystemException if the transaction the scan stopped at is followed in the log
     *     by a later one of this journal: it was damaged, not torn, and nothing is applied or written
     * @throws IomapException if the journal was aborted
     * @throws IOException if the device fails (the journal is then aborted)
     */
    public ReplayResult replay() throws IOException {
        lock.lock();
        try {
            ensureNotAborted();
            JournalLog.LogScan scan = scanLocked();
            RevokeTable.Applied applied = scan.applied();
            overlay.putAll(applied.images());
            headPosition = scan.position();
            // Skip more sequence numbers than the log can hold transactions, so that a complete
            // transaction lying beyond the one the scan stopped at is never taken for a new one.
            nextSequence = scan.sequence() + logBlocks;
            usedBlocks = scan.scanned();
            transactionsReplayed += scan.transactions();
            blocksReplayed += applied.imagesFound();
            imagesRevokedAtReplay += applied.imagesSkipped();
            replayed = true;
            checkpointLocked();
            return new ReplayResult(scan.transactions(), applied.imagesFound(), applied.revokesFound(),
                    applied.imagesSkipped(), nextSequence);
        } finally {
            lock.unlock();
        }
    }

    /**
     * What {@link #replay()} would apply, found the same way and changing nothing (no write, no flush):
     * for an fsck that checks an image whose journal was not replayed, reading each block as
     * {@link Pending#images()} has it, else from its home. After {@link #replay()} the log is empty and
     * so is the answer.
     *
     * @return the complete transactions in the log and the block images they would leave at home
     * @throws CorruptFileSystemException as {@link #replay()}: the scan stopped at a damaged
     *     transaction that a later one follows
     * @throws IomapException if the journal was aborted
     * @throws IOException if the device fails
     */
    public Pending inspect() throws IOException {
        lock.lock();
        try {
            ensureNotAborted();
            if (replayed) {
                return new Pending(0, 0, 0, new TreeMap<>());
            }
            JournalLog.LogScan scan = scanLocked();
            RevokeTable.Applied applied = scan.applied();
            SortedMap<Long, ByteBuffer> images = new TreeMap<>();
            applied.images().forEach((block, image) -> images.put(block, image.asReadOnlyBuffer()));
            return new Pending(scan.transactions(), applied.imagesFound(), applied.revokesFound(), images);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The complete transactions of an unreplayed log, as {@link #inspect()} found them.
     *
     * @param transactions complete transactions in the log
     * @param blocks block images in them (a block logged twice counts twice), revoked ones included
     * @param revokes revoke records in them
     * @param images what replay would write home: the newest unrevoked image of each block, by block
     *     number; read-only buffers
     */
    public record Pending(long transactions, long blocks, long revokes, SortedMap<Long, ByteBuffer> images) {
        /** Copies the map (the buffers are shared, read-only). */
        public Pending {
            images = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(images));
        }

        /** @return whether replay would change nothing */
        public boolean isEmpty() {
            return transactions == 0;
        }
    }

    /** Scans from the tail to the first incomplete transaction; called with the lock held. */
    private JournalLog.LogScan scanLocked() throws IOException {
        try {
            return log.scanFrom(tailPosition, tailSequence);
        } catch (CorruptFileSystemException e) {
            throw e;
        } catch (IOException e) {
            throw abort(e);
        }
    }

    /**
     * @return a new, empty transaction
     * @throws IllegalStateException if the journal has not been replayed
     */
    public Transaction begin() {
        ensureReplayed();
        return new Transaction();
    }

    /**
     * Writes the newest committed image of every block to its home location, flushes, then moves the
     * tail to the head in the journal superblock and flushes again: afterwards the log is empty and
     * the home blocks are current. Does nothing if there is nothing to checkpoint.
     *
     * @throws IllegalStateException if the journal has not been replayed
     * @throws IomapException if the journal was aborted
     * @throws IOException if the device fails (the journal is then aborted)
     */
    public void checkpoint() throws IOException {
        lock.lock();
        try {
            ensureReplayed();
            ensureNotAborted();
            checkpointLocked();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The overlay: the newest committed image of {@code blockNo} not yet written home.
     *
     * @param blockNo a device block
     * @return a copy of that image (the caller owns it), or empty if the block's home location is
     *     current (never logged, or checkpointed since)
     * @throws IllegalStateException if the journal has not been replayed
     */
    public Optional<ByteBuffer> latest(long blockNo) {
        ensureReplayed();
        ByteBuffer image = overlay.get(blockNo);
        return image == null ? Optional.empty() : Optional.of(copy(image));
    }

    /**
     * Reads a block as the journal sees it: the overlay image if there is one ({@link #latest(long)}),
     * else the block's home location on the device. Uncommitted transactions are not visible.
     *
     * @param blockNo a device block
     * @return a new little-endian buffer of one block, position 0, that the caller owns
     * @throws IllegalStateException if the journal has not been replayed
     * @throws InvalidRangeException if the block is outside the device
     * @throws IOException if the device fails
     */
    public ByteBuffer readBlock(long blockNo) throws IOException {
        Optional<ByteBuffer> image = latest(blockNo);
        if (image.isPresent()) {
            return image.get();
        }
        return BlockIo.read(device, blockNo, 1);
    }

    /** @return what the journal has done since it was opened */
    public Stats stats() {
        lock.lock();
        try {
            return new Stats(transactionsCommitted, blocksLogged, revokesLogged, logBlocksWritten, checkpoints,
                    forcedCheckpoints, blocksCheckpointed, transactionsReplayed, blocksReplayed,
                    imagesRevokedAtReplay, logBlocks, usedBlocks);
        } finally {
            lock.unlock();
        }
    }

    /**
     * @return the most data blocks one transaction that revokes nothing may log: it must fit in the
     *     empty log (revokes take room too: one revoke block per as many block numbers as a
     *     descriptor lists)
     */
    public long maxTransactionBlocks() {
        return log.maxTransactionBlocks();
    }

    /** @return the most blocks one transaction that logs no image may revoke */
    public long maxTransactionRevokes() {
        return log.maxTransactionRevokes();
    }

    /** @return the first block of the region (the journal superblock) */
    public long start() {
        return start;
    }

    /** @return blocks in the region */
    public long length() {
        return length;
    }

    /** @return the id chosen at format time, carried by every record */
    public long journalId() {
        return journalId;
    }

    @Override
    public String toString() {
        return "Journal[blocks " + start + "+" + length + ", id " + Long.toHexString(journalId) + "]";
    }

    /**
     * One transaction: block images logged and blocks revoked by one thread, made durable together by
     * {@link #commit()} or dropped by {@link #close()} before that. Not thread-safe. After
     * {@code commit} or {@code close}, logging and revoking fail with {@link IllegalStateException}.
     */
    public final class Transaction implements AutoCloseable {
        private final Map<Long, ByteBuffer> images = new LinkedHashMap<>();
        private final Set<Long> revokes = new LinkedHashSet<>();
        private boolean open = true;

        private Transaction() {
        }

        /**
         * Adds the new contents of a block. Logging a block again in the same transaction replaces
         * the earlier image. Logging a block this transaction revoked keeps the revoke (for the
         * images of earlier transactions) and adds this image, which replay applies.
         *
         * @param blockNo the block's home location; outside the journal region
         * @param newContents exactly one block, between position and limit; copied, position unchanged
         * @throws InvalidRangeException if the block is outside the device or inside the journal, or
         *     the contents are not one block
         * @throws NoSpaceException if the transaction would no longer fit in the log (this block is
         *     not added; the transaction stays usable)
         * @throws IllegalStateException if the transaction was committed or closed
         */
        public void log(long blockNo, ByteBuffer newContents) throws IomapException {
            ensureOpen();
            log.checkTarget(blockNo, "log");
            if (newContents.remaining() != blockSize) {
                throw new InvalidRangeException("journal: the image of block " + blockNo + " is "
                        + newContents.remaining() + " bytes, not one " + blockSize + "-byte block");
            }
            int count = images.size() + (images.containsKey(blockNo) ? 0 : 1);
            if (log.logBlocksFor(count, revokes.size()) > logBlocks) {
                throw log.tooLarge(count, revokes.size());
            }
            images.put(blockNo, copy(newContents).asReadOnlyBuffer());
        }

        /**
         * Revokes a block, as a truncate or unlink that frees it must: once this transaction commits
         * (sequence {@code s}), no image of the block logged by a transaction with a sequence below
         * {@code s} is ever written to its home location again, neither by {@link #replay()} after a
         * crash nor by {@link Journal#checkpoint()}, and {@link Journal#readBlock} and
         * {@link Journal#latest} no longer return it. Within this transaction the last of
         * {@link #log} and {@code revoke} wins for the transaction's own image: revoking a block
         * this transaction logged drops that image; logging it after revoking it keeps the revoke
         * and the new image, which then replays. Revoking a block that was never logged is allowed
         * and cheap (8 bytes in a revoke block); revoking one twice records it once.
         *
         * <p>Until the commit, other readers still see the block's committed image (uncommitted
         * changes are private), and a checkpoint (one forced by another transaction's commit
         * included) may still write that image home. So the freed block must not be reused (given
         * to another file and written in place) before this transaction has committed: free it in
         * the allocator only after {@link #commit()} returns. Reads through {@link #read(long)} of
         * a block this transaction revoked and did not log again return its home location.
         *
         * @param blockNo the block's home location; outside the journal region
         * @throws InvalidRangeException if the block is outside the device or inside the journal
         * @throws NoSpaceException if the transaction would no longer fit in the log (nothing
         *     changes; the transaction stays usable)
         * @throws IllegalStateException if the transaction was committed or closed
         */
        public void revoke(long blockNo) throws IomapException {
            ensureOpen();
            log.checkTarget(blockNo, "revoke");
            int count = images.size() - (images.containsKey(blockNo) ? 1 : 0);
            int revoked = revokes.size() + (revokes.contains(blockNo) ? 0 : 1);
            if (log.logBlocksFor(count, revoked) > logBlocks) {
                throw log.tooLarge(count, revoked);
            }
            images.remove(blockNo);
            revokes.add(blockNo);
        }

        /**
         * Reads a block as this transaction sees it: its own image if it logged the block, else its
         * home location if it revoked the block, else {@link Journal#readBlock(long)}.
         *
         * @param blockNo a device block
         * @return a new little-endian buffer of one block, position 0, that the caller owns
         * @throws IOException as {@link Journal#readBlock(long)}
         */
        public ByteBuffer read(long blockNo) throws IOException {
            ByteBuffer own = images.get(blockNo);
            if (own != null) {
                return copy(own);
            }
            return revokes.contains(blockNo) ? BlockIo.read(device, blockNo, 1) : readBlock(blockNo);
        }

        /** @return distinct blocks logged so far (a revoke drops the block's image) */
        public int blocks() {
            return images.size();
        }

        /** @return distinct blocks revoked so far */
        public int revokes() {
            return revokes.size();
        }

        /**
         * Appends the transaction to the log and flushes the device: when this returns, the
         * transaction survives a crash, its images are visible through {@link Journal#readBlock} and
         * the blocks it revoked (and did not log again) are gone from the overlay. Home blocks are
         * not written (see {@link Journal#checkpoint()}). A transaction that neither logged nor
         * revoked anything writes nothing. The transaction is finished afterwards, whether this
         * succeeds or fails.
         *
         * @throws NoSpaceException if the transaction is larger than the whole log
         * @throws IomapException if the journal was aborted
         * @throws IOException if the device fails (the journal is then aborted; whether the
         *     transaction survives is unknown until replay)
         * @throws IllegalStateException if already committed or closed
         */
        public void commit() throws IOException {
            ensureOpen();
            open = false;
            if (!images.isEmpty() || !revokes.isEmpty()) {
                commitTransaction(images, revokes);
            }
        }

        /** Drops the transaction if it was not committed; does nothing otherwise. */
        @Override
        public void close() {
            open = false;
        }

        private void ensureOpen() {
            if (!open) {
                throw new IllegalStateException("the transaction was already committed or closed");
            }
        }
    }

    private void commitTransaction(Map<Long, ByteBuffer> images, Set<Long> revokes) throws IOException {
        lock.lock();
        try {
            ensureReplayed();
            ensureNotAborted();
            long needed = log.logBlocksFor(images.size(), revokes.size());
            if (needed > logBlocks) {
                throw log.tooLarge(images.size(), revokes.size());
            }
            if (needed > logBlocks - usedBlocks) {
                forcedCheckpoints++;
                checkpointLocked();
            }
            try {
                log.append(headPosition, nextSequence, images, revokes);
                device.flush();
            } catch (IOException e) {
                throw abortUnlessNoSpace(e);
            }
            // Images first: a reader (without the lock) never sees the home block of a block this
            // transaction revoked and logged again.
            overlay.putAll(images);
            for (long revoked : revokes) {
                if (!images.containsKey(revoked)) {
                    overlay.remove(revoked);
                }
            }
            headPosition = (headPosition + needed) % logBlocks;
            usedBlocks += needed;
            nextSequence++;
            transactionsCommitted++;
            blocksLogged += images.size();
            revokesLogged += revokes.size();
            logBlocksWritten += needed;
        } finally {
            lock.unlock();
        }
    }

    private void checkpointLocked() throws IOException {
        if (overlay.isEmpty() && tailPosition == headPosition && tailSequence == nextSequence) {
            return;
        }
        try {
            if (!overlay.isEmpty()) {
                log.writeHome(new TreeMap<>(overlay));
                device.flush();
            }
            log.writeSuperblock(headPosition, nextSequence);
            device.flush();
        } catch (IOException e) {
            throw abortUnlessNoSpace(e);
        }
        checkpoints++;
        blocksCheckpointed += overlay.size();
        overlay.clear();
        tailPosition = headPosition;
        tailSequence = nextSequence;
        usedBlocks = 0;
    }

    /**
     * @return the device error that aborted the journal (every later commit and checkpoint fails), or
     *     empty while it works
     */
    public synchronized java.util.Optional<IOException> abortCause() {
        return java.util.Optional.ofNullable(abortCause);
    }

    /**
     * Aborts for a commit's or checkpoint's device error, unless the device's host had no room for a
     * write: the caller has changed nothing yet, and it may work once there is room (see the class
     * comment).
     */
    private IOException abortUnlessNoSpace(IOException cause) {
        return cause instanceof DeviceNoSpaceException ? cause : abort(cause);
    }

    private IOException abort(IOException cause) {
        if (abortCause == null) {
            abortCause = cause;
        }
        return cause;
    }

    private void ensureNotAborted() throws IomapException {
        if (abortCause != null) {
            throw new IomapException(this + " was aborted by an I/O error; remount to replay it", abortCause);
        }
    }

    private void ensureReplayed() {
        if (!replayed) {
            throw new IllegalStateException(this + " must be replayed (replay()) after open() before use");
        }
    }

    private static void checkRegion(BlockDevice device, long start, long length) throws InvalidRangeException {
        long blocks = BlockIo.blockCount(device);
        if (length < MIN_LENGTH_BLOCKS || start < 0 || start > blocks - length) {
            throw new InvalidRangeException("journal region [" + start + ", +" + length + ") must be at least "
                    + MIN_LENGTH_BLOCKS + " blocks inside the device's " + blocks + " blocks");
        }
    }

    /** @return a little-endian heap copy of {@code source}'s remaining bytes, position 0 */
    private static ByteBuffer copy(ByteBuffer source) {
        ByteBuffer copy = ByteBuffer.allocate(source.remaining()).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(source.duplicate());
        return copy.flip();
    }
}
