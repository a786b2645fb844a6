package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.NoSpaceException;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@link KeyStore}: one copy-on-write B-tree over all keys (btree id first), a journal ring of
 * logical entries with group commit, two alternating superblocks, and the data space with reference
 * counts kept in btree 0. The module README describes the layout.
 *
 * <p>Thread-safe: one {@link ReentrantLock} guards the state. A journal write and its device flush run
 * without the lock (commits and reads go on meanwhile; a second flush waits for the first and then
 * writes what is left); a checkpoint holds the lock throughout. After a failed journal or checkpoint
 * write, or a transaction whose reference changes the counts contradict, the store refuses updates
 * ({@link FileSystemShutdownException}) and writes nothing more; reads go on.
 */
public final class BtreeStore implements KeyStore {
    /** Leaves kept loaded after a checkpoint: beyond this many, clean leaves are unloaded. */
    static final int LEAF_CACHE_LIMIT = 4096;

    private final BlockDevice device;
    private final int blockSize;
    private final boolean readOnly;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition flushDone = lock.newCondition();
    private final RefCounts refs = new RefCounts();
    private BcachefsSuperblock sb;
    private Tree tree;
    private BcachefsTransactions transactions;
    private StoreSpace space;
    private JournalRing ring;
    private final List<byte[]> pending = new ArrayList<>();
    private long pendingBytes;
    private long lastSeq;
    private long durableSeq;
    private boolean flushing;
    private boolean closed;
    private IOException failure;
    private long journalBytes;
    private long journalFlushes;
    private long nodeBytes;
    private long superblockBytes;
    private long checkpoints;
    private int leafCacheLimit = LEAF_CACHE_LIMIT;

    private BtreeStore(BlockDevice device, BcachefsSuperblock sb, boolean readOnly) {
        this.device = device;
        this.blockSize = device.blockSize();
        this.sb = sb;
        this.readOnly = readOnly;
    }

    /**
     * Writes an empty store: both superblocks (copy 0 valid with sequence 1, copy 1 zeroed), an empty
     * root leaf at the first block after the journal; flushes.
     *
     * @param device the device, blocks of at least 1 KiB
     * @param format the geometry
     * @throws IllegalArgumentException if the device is too small or its blocks smaller than 1 KiB
     * @throws IOException if the device fails
     */
    public static void format(BlockDevice device, StoreFormat format) throws IOException {
        format.write(device);
    }

    /**
     * @param device a device
     * @return whether block 0 or 1 holds a store superblock (magic and checksum)
     * @throws IOException if the device cannot be read
     */
    public static boolean probe(BlockDevice device) throws IOException {
        if (device.capacity() < 2L * device.blockSize()) {
            return false;
        }
        ByteBuffer two = BlockIo.read(device, 0, 2);
        return BcachefsSuperblock.looksValid(two.slice(0, device.blockSize()).order(two.order()))
                || BcachefsSuperblock.looksValid(two.slice(device.blockSize(), device.blockSize()).order(two.order()));
    }

    /**
     * Opens a store: reads the newer valid superblock, the internal nodes and the allocation tree,
     * replays the journal after the checkpoint and derives the free space. Read-write, a replay that
     * found transactions is followed by a checkpoint; read-only, nothing is written.
     *
     * @param device the device
     * @param readOnly whether to open without writing (updates then fail)
     * @return the store
     * @throws CorruptFileSystemException if no superblock is valid or a node fails its checks
     * @throws ReadOnlyDeviceException if {@code readOnly} is false and the device is read-only
     * @throws IOException if the device fails
     */
    public static BtreeStore open(BlockDevice device, boolean readOnly) throws IOException {
        if (!readOnly && device.readOnly()) {
            throw new ReadOnlyDeviceException("cannot open the store read-write on a read-only device");
        }
        BtreeStore store = new BtreeStore(device, readSuperblock(device), readOnly);
        store.load();
        return store;
    }

    /**
     * @param device a device carrying a store
     * @return whether its journal ring holds entries after the checkpoint the superblock records (what
     *     {@link #open} would replay); reads only
     * @throws IOException if no superblock is valid or the device fails
     */
    public static boolean needsReplay(BlockDevice device) throws IOException {
        return !JournalRing.replay(device, readSuperblock(device)).entries().isEmpty();
    }

    /** @return the newer valid superblock copy; see {@link BcachefsSuperblock#readNewest} */
    static BcachefsSuperblock readSuperblock(BlockDevice device) throws IOException {
        return BcachefsSuperblock.readNewest(device);
    }

    private void load() throws IOException {
        Node root = readNode(sb.rootBlock(), sb.rootLevel());
        tree = new Tree(this::readNode, blockSize, root);
        transactions = new BcachefsTransactions(tree, refs, sb.dataStart(), sb.totalBlocks());
        Set<Long> nodeBlocks = new HashSet<>();
        collectNodeBlocks(root, KeyRange.ALL, nodeBlocks);
        List<KeyValue> alloc = new ArrayList<>();
        tree.scan(RefCounts.key(0), new BKey(1, 0, 0), Integer.MAX_VALUE, alloc);
        for (KeyValue kv : alloc) {
            refs.load(RefCounts.decode(kv.key(), kv.value(), "allocation tree"));
        }
        JournalRing.Replay replay = JournalRing.replay(device, sb);
        lastSeq = sb.checkpointSeq();
        for (JournalCodec.Entry entry : replay.entries()) {
            transactions.prepare(entry.ops(), null);
            transactions.apply(entry.ops(), entry.seq(), null);
            lastSeq = entry.seq();
        }
        durableSeq = lastSeq;
        space = new StoreSpace(lock, refs, sb.dataStart(), sb.totalBlocks() - sb.dataStart(), readOnly);
        for (RefRun run : refs.runs()) {
            space.markUsed(run.blocks().start(), run.blocks().length(), "referenced data " + run);
        }
        for (long block : nodeBlocks) {
            space.markUsed(block, 1, "B-tree node");
        }
        ring = new JournalRing(sb, replay.head(), replay.usedBlocks());
        if (!readOnly && !replay.entries().isEmpty()) {
            lock.lock();
            try {
                checkpointLocked();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Loads every internal node below {@code node} (which may hold {@code range}), collecting all node
     * blocks; a block seen twice, or a node with keys outside the range its parent gives it, is corrupt.
     */
    private void collectNodeBlocks(Node node, KeyRange range, Set<Long> blocks) throws IOException {
        if (!blocks.add(node.block)) {
            throw new CorruptFileSystemException("B-tree node block " + node.block + " is referenced twice");
        }
        if (node.isLeaf()) {
            return;
        }
        for (int i = 0; i < node.size(); i++) {
            if (node.level > 1) {
                collectNodeBlocks(tree.child(node, i, range), range.child(node, i), blocks);
            } else if (!blocks.add(node.childBlocks.get(i))) {
                throw new CorruptFileSystemException("B-tree node block " + node.childBlocks.get(i)
                        + " is referenced twice");
            }
        }
    }

    private Node readNode(long block, int level) throws IOException {
        if (block < sb.dataStart() || block >= sb.totalBlocks()) {
            throw new CorruptFileSystemException("B-tree node pointer to block " + block
                    + " is outside the node and data region");
        }
        return Node.decode(BlockIo.read(device, block, 1), block, level);
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public Optional<byte[]> get(BKey key) throws IOException {
        lock.lock();
        try {
            checkOpen();
            byte[] value = tree.get(key);
            return value == null ? Optional.empty() : Optional.of(value.clone());
        } finally {
            lock.unlock();
        }
    }

    @Override
    public List<KeyValue> scan(BKey from, BKey to, int limit) throws IOException {
        if (limit < 1) {
            throw new IllegalArgumentException("scan limit must be at least 1, got " + limit);
        }
        lock.lock();
        try {
            checkOpen();
            List<KeyValue> out = new ArrayList<>();
            if (from.compareTo(to) < 0) {
                tree.scan(from, to, limit, out);
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Update update() {
        return new StoreUpdate(this);
    }

    /**
     * Commits a transaction's ops (from {@link StoreUpdate#commit}).
     *
     * @param rewrite whether they only rewrite existing keys ({@link Update#commitRewrite}): the node
     *     headroom they must leave is data writeback's
     */
    long commit(List<StoreOp> ops, boolean rewrite) throws IOException {
        lock.lock();
        try {
            checkWritable();
            int entryBytes = JournalCodec.entryBytes(ops);
            if (ring.blocksFor(entryBytes) > ring.blocks() / 2) {
                throw new NoSpaceException("a transaction of " + entryBytes + " bytes does not fit half of the "
                        + ring.blocks() + "-block journal");
            }
            if (ring.wouldPassHalf(pendingBytes + entryBytes) || tree.dirtyCount() > space.nodeReserve() / 4) {
                // May wait for a journal write (the lock released meanwhile): the sequence is taken after.
                checkpointLocked();
            }
            long seq = lastSeq + 1;
            byte[] entry = JournalCodec.encodeEntry(sb.nonce(), seq, ops);
            checkNodeHeadroom(ops, rewrite);
            prepare(ops);
            pending.add(entry);
            pendingBytes += entry.length;
            transactions.apply(ops, seq, space);
            lastSeq = seq;
            return seq;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Checks a transaction against the reference counts and loads the nodes it touches. A reference
     * change that the counts contradict (a count dropping below 0: a key held blocks the allocation tree
     * calls free; a reference added to free blocks; blocks outside the data region) means the allocation
     * tree and the extent keys disagree: writing on would put new data over blocks a file still holds,
     * so the store shuts down (bcachefs goes emergency read-only) and nothing more is written. Caller
     * holds the lock.
     *
     * @throws FileSystemShutdownException on such a conflict (nothing applied)
     */
    private void prepare(List<StoreOp> ops) throws IOException {
        try {
            transactions.prepare(ops, space);
        } catch (CorruptFileSystemException e) {
            failure = e;
            throw shutdown();
        } catch (IllegalArgumentException e) {
            failure = new CorruptFileSystemException(e.getMessage());
            throw shutdown();
        }
    }

    /**
     * Refuses a transaction that adds keys when the blocks left for nodes run low: below half the node
     * reserve for one that adds no reference (namespace operations), below a quarter for one that does
     * (writeback of reserved data, which must keep working), so checkpoints and deletions always find
     * blocks.
     */
    private void checkNodeHeadroom(List<StoreOp> ops, boolean rewrite) throws NoSpaceException {
        if (ops.stream().noneMatch(op -> op instanceof StoreOp.Put)) {
            return;
        }
        boolean addsReferences = ops.stream().anyMatch(op -> op instanceof StoreOp.AddRefs add && add.delta() > 0);
        long floor = addsReferences || rewrite ? space.nodeReserve() / 4 : space.nodeReserve() / 2;
        long headroom = space.nodeHeadroom(tree.dirtyCount());
        if (headroom < floor) {
            throw new NoSpaceException("no space for B-tree growth: " + headroom + " blocks left for nodes, "
                    + floor + " kept for checkpoints, deletions and data writeback");
        }
    }

    @Override
    public void flush(long seq) throws IOException {
        lock.lock();
        try {
            while (true) {
                if (failure != null) {
                    throw shutdown();
                }
                if (seq <= durableSeq) {
                    return;
                }
                checkOpen();
                if (seq > lastSeq) {
                    throw new IllegalArgumentException("flush of sequence " + seq + ", last committed is " + lastSeq);
                }
                if (flushing) {
                    flushDone.awaitUninterruptibly();
                    continue;
                }
                writeBatch();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes the pending entries as one batch and flushes the device, without the lock held meanwhile.
     *
     * <p>The preflush comes first, before any entry is taken: if it fails, nothing was written and
     * nothing changes (the entries stay pending, the store stays usable, the caller's fsync fails and
     * the next flush tries again). Only the entries pending when the preflush started go into the
     * batch: an entry committed meanwhile may point to data the preflush did not cover. A failure of
     * the journal write or of the flush after it shuts the store down (what reached the ring is
     * unknown; the next mount replays what is whole).
     */
    private void writeBatch() throws IOException {
        int taken = pending.size();
        flushing = true;
        lock.unlock();
        IOException preflushError = null;
        try {
            // Preflush (bcachefs's REQ_PREFLUSH on journal writes): data blocks the batch's keys point to
            // completed before their keys were committed, but may still sit in the device's cache; they
            // must be durable before the journal entry that references them can be.
            device.flush();
        } catch (IOException e) {
            preflushError = e;
        } finally {
            lock.lock();
        }
        if (preflushError != null) {
            flushing = false;
            flushDone.signalAll();
            throw preflushError;
        }
        long firstSeq = lastSeq - pending.size() + 1;
        List<byte[]> entries = new ArrayList<>(pending.subList(0, taken));
        pending.subList(0, taken).clear();
        long entryBytes = 0;
        for (byte[] entry : entries) {
            entryBytes += entry.length;
        }
        pendingBytes -= entryBytes;
        JournalRing.Batch batch;
        try {
            batch = ring.build(entries, firstSeq);
        } catch (RuntimeException e) {
            flushing = false;
            flushDone.signalAll();
            throw e;
        }
        IOException error = null;
        lock.unlock();
        try {
            BlockIo.write(device, batch.block(), batch.data(), IoPurpose.METADATA);
            device.flush();
        } catch (IOException e) {
            error = e;
        } finally {
            lock.lock();
            flushing = false;
            flushDone.signalAll();
        }
        if (error != null) {
            failure = error;
            throw error;
        }
        journalBytes += batch.data().capacity();
        journalFlushes++;
        durableSeq = Math.max(durableSeq, batch.lastSeq());
        space.releaseDurable(durableSeq);
    }

    @Override
    public void flushAll() throws IOException {
        long seq;
        lock.lock();
        try {
            seq = lastSeq;
        } finally {
            lock.unlock();
        }
        flush(seq);
    }

    @Override
    public void checkpoint() throws IOException {
        lock.lock();
        try {
            checkWritable();
            checkpointLocked();
        } finally {
            lock.unlock();
        }
    }

    private void checkpointLocked() throws IOException {
        checkpointLocked(null);
    }

    /**
     * A checkpoint whose superblock records {@code label}, or the label it has if null (read only after
     * any journal write in flight is over: a label change may have checkpointed meanwhile). Caller
     * holds the lock.
     */
    private void checkpointLocked(String label) throws IOException {
        while (flushing) {
            flushDone.awaitUninterruptibly();
        }
        if (failure != null) {
            throw shutdown();
        }
        Checkpointer.Result result;
        try {
            result = new Checkpointer(device, space, tree).run(sb, label == null ? sb.label() : label, lastSeq,
                    ring.head());
        } catch (NoSpaceException e) {
            throw e;
        } catch (IOException e) {
            failure = e;
            throw e;
        }
        sb = result.superblock();
        nodeBytes += result.nodeBytes();
        superblockBytes += blockSize;
        checkpoints++;
        pending.clear();
        pendingBytes = 0;
        durableSeq = lastSeq;
        ring.checkpointed();
        space.releaseDurable(Long.MAX_VALUE);
        tree.evictLeaves(leafCacheLimit);
        flushDone.signalAll();
    }

    @Override
    public String label() throws IOException {
        lock.lock();
        try {
            checkOpen();
            return sb.label();
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>A checkpoint whose superblock carries the label: written to the copy the next checkpoint
     * rotates to ({@code sequence % 2}) and flushed, as every checkpoint, under the store's lock. The
     * other copy keeps the previous label until the next checkpoint overwrites it with this one; a torn
     * write of this copy leaves the previous checkpoint, label and all, as the valid one.
     */
    @Override
    public void setLabel(String label) throws IOException {
        BcachefsSuperblock.labelBytes(label);
        lock.lock();
        try {
            checkWritable();
            if (device.readOnly()) {
                throw new ReadOnlyDeviceException("cannot set the label: the device is read-only");
            }
            checkpointLocked(label);
        } finally {
            lock.unlock();
        }
    }

    /** Sets how many leaves stay loaded after a checkpoint (for tests; {@value #LEAF_CACHE_LIMIT} by default). */
    void leafCacheLimit(int leaves) {
        lock.lock();
        try {
            leafCacheLimit = leaves;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long discardFree(long first, long end, long minBlocks) throws IOException {
        if (first < 0 || minBlocks < 1) {
            throw new IllegalArgumentException("discard of free runs of at least " + minBlocks + " blocks from block "
                    + first);
        }
        if (readOnly || device.readOnly()) {
            throw new ReadOnlyDeviceException("cannot discard free space: the store or its device is read-only");
        }
        long discarded = 0;
        long at = first;
        for (BlockRange run; at < end && (run = discardNextFree(at, end, minBlocks)) != null; at = run.end()) {
            if (run.length() >= minBlocks) {
                discarded += run.length();
            }
        }
        return discarded;
    }

    /**
     * Under the lock, finds the first free run of {@code [at, end)} and discards it if it is long enough.
     *
     * @return the run (discarded or too short), or null if none is left
     */
    private BlockRange discardNextFree(long at, long end, long minBlocks) throws IOException {
        lock.lock();
        try {
            checkWritable();
            BlockRange run = space.firstFreeIn(at, end).orElse(null);
            if (run != null && run.length() >= minBlocks) {
                device.discard(run.start() * blockSize, run.length() * blockSize);
            }
            return run;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long deviceBlocks() {
        lock.lock();
        try {
            return sb.totalBlocks();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public DataSpace space() {
        return space;
    }

    @Override
    public StoreStats stats() {
        lock.lock();
        try {
            return new StoreStats(journalBytes, journalFlushes, nodeBytes, superblockBytes, checkpoints);
        } finally {
            lock.unlock();
        }
    }

    /** @return the reference runs now (committed, durable or not), ascending */
    public List<RefRun> refRuns() {
        lock.lock();
        try {
            return refs.runs();
        } finally {
            lock.unlock();
        }
    }

    /** @return the level of the root node: 0 while the tree is one leaf (for tests) */
    int rootLevel() {
        lock.lock();
        try {
            return tree.root().level;
        } finally {
            lock.unlock();
        }
    }

    /** @return blocks of B-tree nodes on the device as of the last checkpoint (for tests and statfs) */
    long nodeBlocks() {
        lock.lock();
        try {
            return sb.nodeBlocks();
        } finally {
            lock.unlock();
        }
    }

    /** @return the journal block the next batch goes to, or wraps from (for tests) */
    long journalHead() {
        lock.lock();
        try {
            return ring.head();
        } finally {
            lock.unlock();
        }
    }

    /** @return the last durable sequence (for tests) */
    long durableSeq() {
        lock.lock();
        try {
            return durableSeq;
        } finally {
            lock.unlock();
        }
    }

    /** @return the last committed sequence */
    public long lastSeq() {
        lock.lock();
        try {
            return lastSeq;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() throws IOException {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            try {
                if (!readOnly && failure == null) {
                    checkpointLocked();
                }
            } finally {
                closed = true;
            }
        } finally {
            lock.unlock();
        }
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new IOException("the store is closed");
        }
    }

    private void checkWritable() throws IOException {
        checkOpen();
        if (readOnly) {
            throw new ReadOnlyDeviceException("the store was opened read-only");
        }
        if (failure != null) {
            throw shutdown();
        }
    }

    private FileSystemShutdownException shutdown() {
        String why = failure instanceof CorruptFileSystemException ? "found the allocation tree inconsistent"
                : "failed writing";
        var e = new FileSystemShutdownException("the store " + why + " and refuses updates (unmount and run fsck): "
                + failure.getMessage());
        e.initCause(failure);
        return e;
    }
}
