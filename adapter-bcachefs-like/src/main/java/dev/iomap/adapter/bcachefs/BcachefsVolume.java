package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.BKey;
import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.adapter.bcachefs.store.KeyValue;
import dev.iomap.adapter.bcachefs.store.StoreLimits;
import dev.iomap.adapter.bcachefs.store.Update;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The filesystem's view of the store: inodes cached in memory, transactions that remember which
 * inodes they touched (so fsync flushes only up to the last one of its inode), extents read and
 * rewritten with their reference counts, and blobs (symlink targets, attribute sets) split over keys.
 *
 * <p>Locking: every change of metadata runs under {@link #meta}, from building the transaction to
 * its commit, so the cached inode records are what the store holds plus the uncommitted time
 * updates listed in {@code dirty}. Nothing waits for writeback while holding {@link #meta}.
 */
final class BcachefsVolume {
    /** Bytes of a blob chunk (symlink targets, attribute sets). */
    static final int CHUNK = 256;
    /** Most extent keys one transaction rewrites before the caller commits and goes on. */
    static final int BATCH = 64;

    final KeyStore store;
    final Config config;
    final int blockSize;
    private final BlockDevice device;
    final ReentrantLock meta = new ReentrantLock();
    final DataReserve reserve;
    private final Map<Long, InodeRecord> inodes = new ConcurrentHashMap<>();
    private final Map<Long, Long> lastSeq = new ConcurrentHashMap<>();
    private final Set<Long> dirty = new HashSet<>();
    private long nextIno;
    private long inodeCount;
    private volatile boolean closed;

    /** One extent key read from the store. */
    record Extent(long ino, long start, long end, ExtentValue value) {
        int blocks() {
            return (int) (end - start);
        }
    }

    /** A transaction that remembers the inodes it wrote. */
    final class Tx {
        final Update update = store.update();
        private final Set<Long> touched = new HashSet<>();

        /** Puts the current record of an inode. */
        Tx put(InodeRecord r) {
            update.put(Keys.inode(r.ino), r.encode());
            touched.add(r.ino);
            return this;
        }

        /** Notes that the transaction changes {@code ino}'s data or names (for its fsync). */
        Tx touch(long ino) {
            touched.add(ino);
            return this;
        }

        /** Commits; caller holds {@link #meta}. @return the sequence */
        long commit() throws IOException {
            return committed(update.commit());
        }

        /** Commits a transaction that only rewrites existing inode records ({@link Update#commitRewrite}). */
        long commitRewrite() throws IOException {
            return committed(update.commitRewrite());
        }

        private long committed(long seq) {
            for (long ino : touched) {
                lastSeq.merge(ino, seq, Math::max);
                dirty.remove(ino);
            }
            return seq;
        }
    }

    BcachefsVolume(KeyStore store, Config config, BlockDevice device) throws IOException {
        this.store = store;
        this.device = device;
        this.config = config;
        this.blockSize = store.blockSize();
        this.reserve = new DataReserve(store.space(), store::flushAll);
        byte[] counters = store.get(Keys.nextIno())
                .orElseThrow(() -> new CorruptFileSystemException("bcachefs-like: the inode counter key is missing"));
        if (counters.length != 16) {
            throw new CorruptFileSystemException("bcachefs-like: the inode counter key has " + counters.length + " bytes");
        }
        ByteBuffer b = ByteBuffer.wrap(counters).order(ByteOrder.LITTLE_ENDIAN);
        nextIno = b.getLong();
        inodeCount = b.getLong();
    }

    /** @return the value of the counters key */
    static byte[] counters(long nextIno, long inodeCount) {
        return ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(nextIno).putLong(inodeCount).array();
    }

    /** @return the device the data lives on */
    BlockDevice device() {
        return device;
    }

    /** @return a new transaction */
    Tx tx() {
        return new Tx();
    }

    /** Fails once the mount is closed. */
    void checkLive() throws IOException {
        if (closed) {
            throw new FileSystemShutdownException("bcachefs-like mount was unmounted");
        }
    }

    void close() {
        closed = true;
    }

    /** @return the inode, from the cache or the store; caller holds {@link #meta} */
    InodeRecord inode(long ino) throws IOException {
        InodeRecord r = inodes.get(ino);
        if (r != null) {
            return r;
        }
        byte[] value = store.get(Keys.inode(ino)).orElseThrow(() -> new NoSuchFileException("inode " + ino));
        r = InodeRecord.decode(ino, value);
        inodes.put(ino, r);
        return r;
    }

    /** Allocates an inode number and counts the inode in {@code tx}. Caller holds {@link #meta}. */
    long newIno(Tx tx) {
        long ino = nextIno++;
        inodeCount++;
        tx.update.put(Keys.nextIno(), counters(nextIno, inodeCount));
        return ino;
    }

    /** Deletes an inode's record and its counter in {@code tx}. Caller holds {@link #meta}. */
    void deleteInode(Tx tx, long ino) {
        inodeCount--;
        tx.update.delete(Keys.inode(ino)).put(Keys.nextIno(), counters(nextIno, inodeCount));
        tx.touch(ino);
        inodes.remove(ino);
    }

    /** Registers a record created by a transaction (caller holds {@link #meta}). */
    void cache(InodeRecord r) {
        inodes.put(r.ino, r);
    }

    /** @return inodes in use */
    long inodeCount() {
        return inodeCount;
    }

    /** Marks an inode's record changed without a transaction (times); caller holds {@link #meta}. */
    void markDirty(long ino) {
        dirty.add(ino);
    }

    /** Commits the records marked dirty. Caller holds {@link #meta}. */
    void commitDirty() throws IOException {
        if (dirty.isEmpty()) {
            return;
        }
        Tx tx = tx();
        List<Long> written = List.copyOf(dirty);
        for (long ino : written) {
            InodeRecord r = inodes.get(ino);
            if (r != null) {
                tx.put(r);
            }
        }
        dirty.clear();
        try {
            tx.commitRewrite();
        } catch (IOException | RuntimeException e) {
            dirty.addAll(written); // not written: the next sync tries again
            throw e;
        }
    }

    /** @return the last sequence that changed {@code ino}, or 0 */
    long lastSeq(long ino) {
        return lastSeq.getOrDefault(ino, 0L);
    }

    /** @return whether {@code ino} has uncommitted time updates */
    boolean isDirty(long ino) {
        return dirty.contains(ino);
    }

    // ---- extents ----

    /**
     * @param ino the file
     * @param from first file block wanted
     * @param to first block past the range
     * @param limit most extents returned
     * @return the extents overlapping {@code [from, to)}, ascending
     */
    List<Extent> extents(long ino, long from, long to, int limit) throws IOException {
        List<Extent> out = new ArrayList<>();
        BKey cursor = Keys.extent(ino, from + 1);
        BKey past = Keys.past(Keys.EXTENTS, ino);
        while (out.size() < limit) {
            List<KeyValue> page = store.scan(cursor, past, Math.min(limit - out.size(), 64));
            if (page.isEmpty()) {
                return out;
            }
            for (KeyValue kv : page) {
                Extent e = decode(kv);
                if (e.start >= to) {
                    return out;
                }
                out.add(e);
            }
            BKey last = page.get(page.size() - 1).key();
            cursor = new BKey(last.btree(), last.inode(), last.offset() + 1);
        }
        return out;
    }

    /** @return the extent containing file block {@code block}, or the next one after it, if any */
    Optional<Extent> extentAtOrAfter(long ino, long block) throws IOException {
        List<KeyValue> page = store.scan(Keys.extent(ino, block + 1), Keys.past(Keys.EXTENTS, ino), 1);
        return page.isEmpty() ? Optional.empty() : Optional.of(decode(page.get(0)));
    }

    Extent decode(KeyValue kv) throws CorruptFileSystemException {
        BKey k = kv.key();
        String where = "extent key (inode " + k.inode() + ", end block " + k.offset() + ")";
        ExtentValue v = ExtentValue.decode(where, kv.value(), blockSize);
        if (k.offset() < v.logicalBlocks()) {
            throw new CorruptFileSystemException(where + " starts before block 0");
        }
        return new Extent(k.inode(), k.offset() - v.logicalBlocks(), k.offset(), v);
    }

    /**
     * Removes file blocks {@code [from, to)} from the inode's extents in {@code tx}: keys inside are
     * deleted, keys across an edge trimmed, and references adjusted in {@code refs}. Does at most
     * {@code limit} keys (the transaction's own changes are not visible to the next scan: the caller
     * commits before it goes on). Caller holds {@link #meta}.
     *
     * @return the first block not yet processed ({@code to} when done)
     */
    long dropRange(Tx tx, InodeRecord r, long from, long to, RefDeltas refs, int limit) throws IOException {
        List<Extent> overlapping = extents(r.ino, from, to, limit == Integer.MAX_VALUE ? limit : limit + 1);
        boolean more = overlapping.size() > limit;
        long doneTo = to;
        for (int i = 0; i < Math.min(limit, overlapping.size()); i++) {
            Extent e = overlapping.get(i);
            if (e.end <= to) {
                tx.update.delete(Keys.extent(r.ino, e.end));
            }
            refs.add(e.value.physical(), -1);
            r.blocks -= e.value.liveBlocks();
            if (e.start < from) {
                keep(tx, r, e, e.start, from, refs);
            }
            if (e.end > to) {
                keep(tx, r, e, to, e.end, refs);
            }
            doneTo = Math.min(to, e.end);
        }
        tx.touch(r.ino);
        return more ? doneTo : to;
    }

    private void keep(Tx tx, InodeRecord r, Extent e, long start, long end, RefDeltas refs) {
        ExtentValue part = e.value.fragment((int) (start - e.start), (int) (end - start), blockSize);
        tx.update.put(Keys.extent(r.ino, end), part.encode());
        refs.add(part.physical(), +1);
        r.blocks += part.liveBlocks();
    }

    /** Inserts a new extent key and its references. Caller holds {@link #meta}. */
    void insert(Tx tx, InodeRecord r, long end, ExtentValue v, RefDeltas refs) {
        tx.update.put(Keys.extent(r.ino, end), v.encode());
        refs.add(v.physical(), +1);
        r.blocks += v.liveBlocks();
        tx.touch(r.ino);
    }

    // ---- blobs ----

    /** @return the blob of {@code btree} for {@code ino}, empty if none */
    byte[] readBlob(int btree, long ino) throws IOException {
        List<KeyValue> chunks = store.scan(Keys.first(btree, ino), Keys.past(btree, ino), Integer.MAX_VALUE);
        int length = 0;
        for (int i = 0; i < chunks.size(); i++) {
            if (chunks.get(i).key().offset() != i) {
                throw new CorruptFileSystemException("inode " + ino + " btree " + btree + ": chunk " + i + " missing");
            }
            length += chunks.get(i).value().length;
        }
        byte[] out = new byte[length];
        int at = 0;
        for (KeyValue kv : chunks) {
            System.arraycopy(kv.value(), 0, out, at, kv.value().length);
            at += kv.value().length;
        }
        return out;
    }

    /** Replaces the blob of {@code btree} for {@code ino} in {@code tx} (empty: deletes it). */
    void writeBlob(Tx tx, int btree, long ino, byte[] bytes) throws IOException {
        int chunks = Math.ceilDiv(bytes.length, CHUNK);
        for (int i = 0; i < chunks; i++) {
            int from = i * CHUNK;
            byte[] chunk = java.util.Arrays.copyOfRange(bytes, from, Math.min(bytes.length, from + CHUNK));
            tx.update.put(new BKey(btree, ino, i), chunk);
        }
        for (KeyValue kv : store.scan(new BKey(btree, ino, chunks), Keys.past(btree, ino), Integer.MAX_VALUE)) {
            tx.update.delete(kv.key());
        }
        tx.touch(ino);
    }

    static {
        if (CHUNK > StoreLimits.MAX_VALUE_BYTES) {
            throw new AssertionError("blob chunks must fit a value");
        }
    }

    /** Per-block reference changes of one transaction, applied as net {@code addRefs} calls. */
    static final class RefDeltas {
        private final TreeMap<Long, Integer> perBlock = new TreeMap<>();

        void add(BlockRange range, int delta) {
            for (long b = range.start(); b < range.end(); b++) {
                perBlock.merge(b, delta, Integer::sum);
            }
        }

        /** Adds the net changes to {@code update}, one call per run of blocks with the same change. */
        void applyTo(Update update) {
            long runStart = -1;
            long runEnd = -1;
            int runDelta = 0;
            for (Map.Entry<Long, Integer> e : perBlock.entrySet()) {
                long b = e.getKey();
                int d = e.getValue();
                if (d == 0) {
                    continue;
                }
                if (b == runEnd && d == runDelta) {
                    runEnd++;
                    continue;
                }
                emit(update, runStart, runEnd, runDelta);
                runStart = b;
                runEnd = b + 1;
                runDelta = d;
            }
            emit(update, runStart, runEnd, runDelta);
            perBlock.clear();
        }

        private static void emit(Update update, long start, long end, int delta) {
            if (start < 0 || delta == 0) {
                return;
            }
            for (int i = 0; i < Math.abs(delta); i++) {
                update.addRefs(new BlockRange(start, end - start), Integer.signum(delta));
            }
        }
    }
}
