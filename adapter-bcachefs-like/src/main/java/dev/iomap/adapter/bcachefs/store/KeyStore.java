package dev.iomap.adapter.bcachefs.store;

import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * The metadata store of the bcachefs-like adapter: ordered keys in copy-on-write B-trees with
 * checksummed nodes, updated by transactions that are appended to a journal of keys (logical
 * logging) and written into tree nodes later (bcachefs's btree + journal).
 *
 * <p><b>Reads</b> see every committed transaction (durable or not), never an uncommitted one.
 * <b>Durability:</b> a transaction is durable once {@link #flush(long)} with its sequence (or a
 * later one) returned; after a crash, mount replays exactly the durable transactions, each whole or
 * not at all, in commit order. {@link #checkpoint()} writes dirty nodes copy-on-write to new blocks,
 * then a new root (superblock), then lets the journal reuse its space; no node block is written in
 * place, and a node block freed by a checkpoint is reused only after the superblock that no longer
 * points to it is on the device. The store checkpoints on its own when the journal fills.
 *
 * <p><b>Space</b> of the device is the store's: it allocates its own node blocks, and data blocks for
 * the filesystem through {@link #space()}. Data blocks carry a reference count kept by the store (in
 * its allocation tree, updated by {@link Update#addRefs}), so shared extents (reflink) are freed when
 * the last reference goes.
 *
 * <p>Thread-safe: reads, updates and flushes may come from any thread (writeback completion threads
 * commit while namespace operations do); each method is atomic.
 */
public interface KeyStore extends AutoCloseable {

    /** @return the block size of the device and of every node, in bytes */
    int blockSize();

    /**
     * @param key a key
     * @return its value (a copy) if present
     * @throws IOException if a node cannot be read or fails its checksum
     *     ({@link dev.iomap.api.CorruptFileSystemException})
     */
    Optional<byte[]> get(BKey key) throws IOException;

    /**
     * @param from first key wanted (inclusive)
     * @param to end of the range (exclusive)
     * @param limit most entries returned, at least 1
     * @return entries with {@code from <= key < to}, ascending, at most {@code limit}
     * @throws IOException if a node cannot be read or fails its checksum
     */
    List<KeyValue> scan(BKey from, BKey to, int limit) throws IOException;

    /**
     * @return a new, empty transaction; nothing of it is visible until {@link Update#commit()}
     */
    Update update();

    /**
     * Makes every transaction with a sequence up to {@code seq} durable (writes and waits for the
     * journal); returns at once if they are.
     *
     * @param seq a sequence from {@link Update#commit()}
     * @throws IOException if the journal cannot be written; the store then refuses further updates
     */
    void flush(long seq) throws IOException;

    /** Makes every committed transaction durable. @throws IOException as {@link #flush(long)} */
    void flushAll() throws IOException;

    /**
     * Writes every dirty node copy-on-write, then the superblock pointing to the new roots, then
     * releases journal space and the node blocks the new roots no longer use.
     *
     * @throws IOException if a write fails; the previous checkpoint and the journal stay valid
     */
    void checkpoint() throws IOException;

    /**
     * Discards ({@link dev.iomap.device.BlockDevice#discard}) every run of free blocks of
     * {@code [first, end)}, clipped to that range, that is at least {@code minBlocks} long: only blocks
     * that are free in the allocator, i.e. never referenced, or freed by a durable transaction or by a
     * checkpoint whose superblock is on the device; never a block that a committed key, a node or an
     * allocation in flight holds, nor one freed by a transaction not yet durable ({@link #flush} first
     * to include those). Each run is discarded under the lock that allocation takes, so nothing is
     * allocated from it meanwhile; runs are looked up one at a time, so other work goes on between them.
     *
     * @param first first device block of the range
     * @param end first device block past it
     * @param minBlocks the shortest run worth discarding, at least 1
     * @return blocks discarded
     * @throws dev.iomap.device.ReadOnlyDeviceException if the device or the store is read-only (even if
     *     nothing is free)
     * @throws IOException if the store failed or is closed, or a discard fails
     */
    long discardFree(long first, long end, long minBlocks) throws IOException;

    /** Bytes of UTF-8 a label holds at most: bcachefs's {@code BCH_SB_LABEL_SIZE}. */
    int MAX_LABEL_BYTES = BcachefsSuperblock.LABEL_BYTES;

    /**
     * Checks a label as {@link #setLabel} does, without a store (for mkfs's checks).
     *
     * @param label the label, empty for none
     * @throws dev.iomap.api.InvalidRangeException if it holds a NUL, is not valid text, or is longer than
     *     {@link #MAX_LABEL_BYTES} bytes of UTF-8
     */
    static void checkLabel(String label) throws dev.iomap.api.InvalidRangeException {
        BcachefsSuperblock.labelBytes(label);
    }

    /**
     * @return the label the newest superblock records, empty if none
     * @throws IOException if the store is closed
     */
    String label() throws IOException;

    /**
     * Records a new label: a checkpoint whose superblock carries it, written and flushed before this
     * returns (every committed transaction becomes durable with it).
     *
     * @param label the label, empty to clear it
     * @throws dev.iomap.api.InvalidRangeException as {@link #checkLabel} (nothing written)
     * @throws dev.iomap.device.ReadOnlyDeviceException if the store or its device is read-only
     * @throws dev.iomap.api.FileSystemShutdownException after a failed write
     * @throws IOException if the store is closed or a write fails (the previous superblock stays valid)
     */
    void setLabel(String label) throws IOException;

    /** @return blocks of the device the store spans (superblocks, journal, nodes and data) */
    long deviceBlocks();

    /** @return the data-space allocator (reservations, allocation, reference counts) */
    DataSpace space();

    /** @return counters: journal bytes and node bytes written, checkpoints, journal flushes */
    StoreStats stats();

    /** Checkpoints (if the store was not failed) and releases memory. The device is not closed. */
    @Override
    void close() throws IOException;
}
