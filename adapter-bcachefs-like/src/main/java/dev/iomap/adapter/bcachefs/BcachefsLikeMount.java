package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.BKey;
import dev.iomap.adapter.bcachefs.store.DataSpace;
import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.adapter.bcachefs.store.KeyValue;
import dev.iomap.adapter.bcachefs.store.StoreStats;
import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.spi.WritebackOps;
import dev.iomap.spi.XattrOps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One mounted bcachefs-like filesystem: file sizes, fallocate, reflink, durability and the mount's
 * life; names and attributes are in {@link Namespace}, the data path in {@link DataPath}.
 *
 * <p>Mount opens the store (which replays its journal of keys), reads the config key and finishes
 * the work a crash left pending: inodes unlinked while open are freed, truncates that did not drop
 * all their extents are completed. Unmount commits and checkpoints the store. Thread-safe.
 */
final class BcachefsLikeMount extends Namespace implements MountedFileSystem, SuperOps, FileOps {
    private final Map<Long, FileState> states = new ConcurrentHashMap<>();
    private final ExtentReader reader;
    private final DataPath data;
    private final DataSpace space;
    private final AtomicLong trimmedBytes = new AtomicLong();

    private BcachefsLikeMount(BcachefsVolume volume, BlockDevice device) {
        super(volume);
        this.reader = new ExtentReader(device, volume.blockSize);
        this.space = volume.store.space();
        this.data = new DataPath(volume, reader, this::state);
    }

    /**
     * Mounts an opened store.
     *
     * @param store the store, opened read-write on {@code device}
     * @param device the device
     * @return the mount
     * @throws CorruptFileSystemException if the config or the root is missing or damaged
     * @throws IOException if the device fails
     */
    static BcachefsLikeMount mount(KeyStore store, BlockDevice device) throws IOException {
        byte[] config = store.get(Keys.config())
                .orElseThrow(() -> new CorruptFileSystemException("bcachefs-like: the config key is missing"));
        BcachefsVolume volume = new BcachefsVolume(store, Config.decode(config), device);
        BcachefsLikeMount mount = new BcachefsLikeMount(volume, device);
        mount.locked(() -> mount.inodeOf(Keys.ROOT_INO, FileType.DIRECTORY));
        mount.finishPending();
        return mount;
    }

    /** Frees orphans and completes truncates a crash interrupted. */
    private void finishPending() throws IOException {
        List<KeyValue> pending = volume.store.scan(new BKey(Keys.PENDING, 0, 0), new BKey(Keys.PENDING + 1, 0, 0),
                Integer.MAX_VALUE);
        for (KeyValue kv : pending) {
            long ino = kv.key().inode();
            locked(() -> {
                if (kv.key().offset() == Keys.PENDING_ORPHAN) {
                    destroy(ino);
                } else {
                    InodeRecord r = volume.inode(ino);
                    trimTo(r.ino, r.size);
                }
                return null;
            });
        }
    }

    FileState state(long ino) {
        return states.computeIfAbsent(ino, FileState::new);
    }

    @Override
    public int blockSize() {
        return volume.blockSize;
    }

    @Override
    public long rootIno() {
        return Keys.ROOT_INO;
    }

    @Override
    public SuperOps superOps() {
        return this;
    }

    @Override
    public InodeOps inodeOps() {
        return this;
    }

    @Override
    public FileOps fileOps() {
        return this;
    }

    @Override
    public XattrOps xattrOps() {
        return this;
    }

    @Override
    public long maxFileSize() {
        return InodeRecord.MAX_SIZE;
    }

    /** The most blocks of one atomic write: see {@link #atomicWriteLimits}. */
    static final int ATOMIC_WRITE_MAX_BLOCKS = 16;

    /**
     * From one block up to {@link #ATOMIC_WRITE_MAX_BLOCKS}, also with {@code nocow}: an atomic write
     * always gets new blocks ({@link DataPath#mapBlocks}) and all its extent keys and the size are one
     * btree transaction ({@link DataPath#atomicWriteCompleted}), whose journal entry must fit half the
     * journal ({@code BtreeStore.commit}): 16 extent keys, their fragments' trims and the inode are a few
     * hundred bytes.
     */
    @Override
    public dev.iomap.api.AtomicWriteLimits atomicWriteLimits() {
        return dev.iomap.api.AtomicWriteLimits.of(blockSize(), blockSize() * ATOMIC_WRITE_MAX_BLOCKS);
    }

    @Override
    public IomapOps iomapOps() {
        return data;
    }

    @Override
    public WritebackOps writebackOps() {
        return data;
    }

    @Override
    public FsStat statfs() throws IOException {
        return locked(() -> {
            long free = volume.reserve.free();
            return new FsStat(blockSize(), space.totalBlocks(), free, volume.inodeCount() + free, free);
        });
    }

    @Override
    public void setSize(IomapInode inode, long newSize) throws IOException {
        InvalidRangeException.checkRange("bcachefs-like setSize of inode " + inode.ino(), newSize, 0, maxFileSize());
        FileState st = state(inode.ino());
        st.release(Math.ceilDiv(newSize, blockSize()), Long.MAX_VALUE, volume.reserve);
        locked(() -> {
            InodeRecord r = volume.inode(inode.ino());
            Instant now = Instant.now();
            r.mtime = now;
            r.ctime = now;
            boolean shrink = newSize < r.size || !volume.extents(r.ino, Math.ceilDiv(newSize, blockSize()),
                    Long.MAX_VALUE, 1).isEmpty();
            r.size = newSize;
            BcachefsVolume.Tx tx = volume.tx();
            if (shrink) {
                tx.update.put(Keys.pending(r.ino, Keys.PENDING_TRUNCATE), new byte[0]);
            }
            tx.put(r).commit();
            if (shrink) {
                trimTo(r.ino, newSize);
            }
            return null;
        });
        st.generation.incrementAndGet();
    }

    /** Drops the extents past {@code size} in batches, then the pending-truncate key. Caller holds the lock. */
    private void trimTo(long ino, long size) throws IOException {
        dropAll(ino, Math.ceilDiv(size, blockSize()), Long.MAX_VALUE);
        BcachefsVolume.Tx tx = volume.tx().touch(ino);
        tx.update.delete(Keys.pending(ino, Keys.PENDING_TRUNCATE));
        tx.commit();
    }

    /** Drops the extents of {@code [from, to)}, one transaction per batch. Caller holds the lock. */
    private void dropAll(long ino, long from, long to) throws IOException {
        long at = from;
        while (at < to) {
            InodeRecord r = volume.inode(ino).copy();
            BcachefsVolume.Tx tx = volume.tx();
            BcachefsVolume.RefDeltas refs = new BcachefsVolume.RefDeltas();
            long next = volume.dropRange(tx, r, at, to, refs, BcachefsVolume.BATCH);
            refs.applyTo(tx.update);
            tx.put(r).commit();
            volume.cache(r);
            at = next;
        }
        state(ino).generation.incrementAndGet();
    }

    @Override
    void destroy(long ino) throws IOException {
        InodeRecord r = volume.inode(ino);
        if (r.type == FileType.REGULAR) {
            dropAll(ino, 0, Long.MAX_VALUE);
        }
        BcachefsVolume.Tx tx = volume.tx();
        freeSmallInode(tx, ino);
        tx.commit();
        FileState st = states.remove(ino);
        if (st != null) {
            st.release(0, Long.MAX_VALUE, volume.reserve);
        }
    }

    @Override
    public void fallocate(IomapInode inode, FallocateMode mode, long offset, long length) throws IOException {
        InvalidRangeException.checkRange("bcachefs-like fallocate of inode " + inode.ino(), offset, length,
                maxFileSize());
        long first = offset / blockSize();
        long end = Math.ceilDiv(offset + length, blockSize());
        FileState st = state(inode.ino());
        if (mode != FallocateMode.ALLOCATE) {
            st.release(first, end, volume.reserve);
        }
        locked(() -> {
            if (mode != FallocateMode.ALLOCATE) {
                dropAll(inode.ino(), first, end);
            }
            if (mode != FallocateMode.PUNCH_HOLE) {
                allocateZeroed(inode.ino(), first, end);
            }
            InodeRecord r = volume.inode(inode.ino());
            r.mtime = r.ctime = Instant.now();
            volume.tx().put(r).commit();
            return null;
        });
        st.generation.incrementAndGet();
    }

    /** Gives every hole of {@code [first, end)} new zeroed blocks (no unwritten state). Caller holds the lock. */
    private void allocateZeroed(long ino, long first, long end) throws IOException {
        long b = first;
        int maxBlocks = volume.config.extentMaxBytes() / blockSize();
        while (b < end) {
            List<BcachefsVolume.Extent> next = volume.extents(ino, b, end, 1);
            if (!next.isEmpty() && next.get(0).start() <= b) {
                b = next.get(0).end();
                continue;
            }
            long holeEnd = next.isEmpty() ? end : Math.min(end, next.get(0).start());
            long want = Math.min(holeEnd - b, maxBlocks);
            volume.reserve.reserve(want);
            BlockRange run = space.allocate(want, -1);
            reader.forget(run);
            if (run.length() < want) {
                space.unreserve(want - run.length());
            }
            int blocks = (int) run.length();
            byte[] zeroes = new byte[blocks * blockSize()];
            try {
                BlockIo.write(volume.device(), run.start(), List.of(ByteBuffer.wrap(zeroes)), IoPurpose.DATA);
            } catch (IOException e) {
                space.release(run);
                throw e;
            }
            int csum = volume.config.checksum();
            ExtentValue v = new ExtentValue(run.start(), blocks, zeroes.length, 0, blocks, blocks, csum,
                    Codecs.COMPRESS_NONE, Codecs.checksum(csum, zeroes, zeroes.length));
            InodeRecord r = volume.inode(ino).copy();
            BcachefsVolume.Tx tx = volume.tx();
            BcachefsVolume.RefDeltas refs = new BcachefsVolume.RefDeltas();
            volume.insert(tx, r, b + blocks, v, refs);
            refs.applyTo(tx.update);
            tx.put(r).commit();
            volume.cache(r);
            b += blocks;
        }
    }

    @Override
    public void cloneRange(IomapInode source, long srcOffset, IomapInode target, long dstOffset, long length)
            throws IOException {
        int bs = blockSize();
        if (srcOffset % bs != 0 || dstOffset % bs != 0) {
            throw new InvalidRangeException("bcachefs-like clone: offsets " + srcOffset + " and " + dstOffset
                    + " must be multiples of the block size " + bs);
        }
        long blocks = Math.ceilDiv(length, bs);
        long src = srcOffset / bs;
        long dst = dstOffset / bs;
        state(target.ino()).release(dst, dst + blocks, volume.reserve);
        locked(() -> {
            dropAll(target.ino(), dst, dst + blocks);
            long at = src;
            while (at < src + blocks) {
                List<BcachefsVolume.Extent> batch = volume.extents(source.ino(), at, src + blocks, BcachefsVolume.BATCH);
                if (batch.isEmpty()) {
                    break;
                }
                InodeRecord r = volume.inode(target.ino()).copy();
                BcachefsVolume.Tx tx = volume.tx();
                BcachefsVolume.RefDeltas refs = new BcachefsVolume.RefDeltas();
                for (BcachefsVolume.Extent e : batch) {
                    long from = Math.max(e.start(), src);
                    long to = Math.min(e.end(), src + blocks);
                    ExtentValue part = e.value().fragment((int) (from - e.start()), (int) (to - from), bs);
                    volume.insert(tx, r, dst + (to - src), part, refs);
                    at = to;
                }
                r.size = Math.max(r.size, Math.min(dstOffset + length, (at - src) * bs + dstOffset));
                r.mtime = r.ctime = Instant.now();
                refs.applyTo(tx.update);
                tx.put(r).commit();
                volume.cache(r);
            }
            InodeRecord r = volume.inode(target.ino());
            if (r.size < dstOffset + length) {
                r.size = dstOffset + length;
                volume.tx().put(r).commit();
            }
            return null;
        });
        state(target.ino()).generation.incrementAndGet();
    }

    @Override
    public void updateTimes(IomapInode inode, Instant now) throws IOException {
        locked(() -> {
            InodeRecord r = volume.inode(inode.ino());
            r.mtime = now;
            r.ctime = now;
            volume.markDirty(r.ino);
            return null;
        });
    }

    @Override
    public void fsync(IomapInode inode, boolean dataOnly) throws IOException {
        long seq = locked(() -> {
            if (volume.isDirty(inode.ino())) {
                volume.commitDirty();
            }
            return volume.lastSeq(inode.ino());
        });
        if (seq > 0) {
            volume.store.flush(seq);
        }
    }

    @Override
    public void sync() throws IOException {
        locked(() -> {
            volume.commitDirty();
            return null;
        });
        volume.store.flushAll();
    }

    @Override
    public String label() throws IOException {
        volume.checkLive();
        return volume.store.label();
    }

    /**
     * bcachefs's {@code FS_IOC_SETFSLABEL}: the label goes into the superblock by a checkpoint of the
     * store (the one path that writes superblocks: the copy {@code sequence % 2}, then a device flush),
     * under the metadata lock that unmount's last checkpoint takes too. Checked first: at most 32 bytes
     * of UTF-8 without NUL ({@link dev.iomap.api.InvalidRangeException}); a read-only device is refused
     * ({@link ReadOnlyDeviceException}); nothing is written then.
     */
    @Override
    public void setLabel(String label) throws IOException {
        KeyStore.checkLabel(label);
        locked(() -> {
            volume.checkLive();
            if (volume.device().readOnly()) {
                throw new ReadOnlyDeviceException("bcachefs-like: cannot set the label on a read-only device");
            }
            volume.store.setLabel(label);
            return null;
        });
    }

    /**
     * FITRIM, as bcachefs discards only buckets whose freeing journal entry is on the device: refused on
     * a read-only device (even with nothing free); then {@link #sync} makes the space freed so far
     * durably free; then every free run of the range (clipped to the file system's blocks) at least
     * {@code minLength} long is discarded by the store under its allocation lock
     * ({@link KeyStore#discardFree}). Blocks any key, node or write in flight holds, and blocks freed
     * after the sync, are not discarded.
     */
    @Override
    public long trim(long start, long length, long minLength) throws IOException {
        volume.checkLive();
        int bs = blockSize();
        long fsBlocks = volume.store.deviceBlocks();
        if (start < 0 || minLength < 0 || length < bs || start >= fsBlocks * bs) {
            throw new InvalidRangeException("bcachefs-like: trim of " + length + " bytes at " + start
                    + " (free runs of at least " + minLength + " bytes): the range must start inside the "
                    + fsBlocks * bs + "-byte file system and cover a block");
        }
        if (volume.device().readOnly()) {
            throw new ReadOnlyDeviceException("bcachefs-like: cannot trim a file system on a read-only device");
        }
        long first = start / bs;
        long end = first + Math.ceilDiv(Math.min(length, (fsBlocks - first) * bs), bs);
        sync();
        long trimmed = volume.store.discardFree(first, end, Math.max(1, Math.ceilDiv(minLength, bs))) * bs;
        trimmedBytes.addAndGet(trimmed);
        return trimmed;
    }

    @Override
    public void evict(long ino) throws IOException {
        locked(() -> {
            InodeRecord r = volume.inode(ino);
            if (r.nlink == 0) {
                destroy(ino);
            } else {
                FileState st = states.remove(ino);
                if (st != null) {
                    st.release(0, Long.MAX_VALUE, volume.reserve);
                }
            }
            return null;
        });
    }

    @Override
    public void unmount() throws IOException {
        sync();
        volume.meta.lock();
        try {
            volume.close();
            volume.store.close();
        } finally {
            volume.meta.unlock();
        }
    }

    /**
     * {@code checksum_errors} (extents that failed verification on read), {@code extent_reads} (whole
     * extents read and verified), {@code extent_cache_hits}, the store's journal and node counters, and
     * {@code trimmed_bytes} (bytes {@link #trim} discarded).
     */
    @Override
    public Map<String, Long> counters() {
        Map<String, Long> c = new LinkedHashMap<>();
        c.put("checksum_errors", reader.checksumErrors.get());
        c.put("extent_reads", reader.extentReads.get());
        c.put("extent_cache_hits", reader.cacheHits.get());
        StoreStats s = volume.store.stats();
        c.put("journal_bytes", s.journalBytes());
        c.put("journal_flushes", s.journalFlushes());
        c.put("node_bytes", s.nodeBytes());
        c.put("superblock_bytes", s.superblockBytes());
        c.put("checkpoints", s.checkpoints());
        c.put("trimmed_bytes", trimmedBytes.get());
        return c;
    }
}
