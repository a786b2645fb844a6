package dev.iomap.adapter.gfs2;

import dev.iomap.device.IoPurpose;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.DirectFallbackException;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WriteOps;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackIoend;
import dev.iomap.spi.WritebackOps;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.spi.lock.LockMode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * gfs2-like's mapping: {@code begin} of a write allocates ({@code gfs2_iomap_begin_write}: the new
 * blocks come back {@code MAPPED} and {@code NEW}), {@code end} punches what a short write allocated and
 * did not write, stuffed files are mapped {@code INLINE} with the dinode's live buffer, and writeback
 * only looks blocks up (they all exist by then). Holes are reported sized for reads. A direct write is
 * done directly only where it overwrites allocated blocks within EOF; the rest falls back to the page
 * cache ({@link DirectFallbackException}), as GFS2 does. A mapping asked for with
 * {@link IomapRequest#NOWAIT} (the core's readahead) takes the inode's glock only if that needs no
 * waiting, and otherwise fails at once with {@link dev.iomap.spi.lock.LockTimeoutException}.
 */
final class Gfs2IomapOps implements IomapOps, WritebackOps {
    private final Gfs2LikeMount mount;
    private final Gfs2Volume volume;
    private final Gfs2Transactions tx;
    private final FileTree tree;

    Gfs2IomapOps(Gfs2LikeMount mount) {
        this.mount = mount;
        this.volume = mount.volume;
        this.tx = mount.tx;
        this.tree = mount.tree;
    }

    @Override
    public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request) throws IOException {
        boolean write = gated(request);
        boolean fault = request.contains(IomapRequest.FAULT);
        LockMode mode = glockMode(request);
        mount.remember(inode);
        if (write) {
            mount.checkLive();
        }
        boolean locked = mode != null
                && mount.node.lockInode(inode.ino(), mode, request.contains(IomapRequest.NOWAIT));
        boolean rgrps = false;
        try {
            if (write) {
                mount.node.lockPreferredRgrp(1);
                rgrps = true;
            }
            while (true) {
                try {
                    return mapLocked(inode, pos, length, write, fault, request.contains(IomapRequest.DIRECT));
                } catch (dev.iomap.api.NoSpaceException e) {
                    if (!mount.node.clustered() || mount.node.holdsAllRgrps()) {
                        throw e;
                    }
                    // No group had room alone for all of it: try again holding every group.
                    mount.node.unlockRgrps();
                    rgrps = false;
                    mount.node.lockAllRgrps();
                    rgrps = true;
                }
            }
        } catch (IOException | RuntimeException e) {
            if (rgrps) {
                mount.node.unlockRgrps();
            }
            if (locked) {
                mount.glocks.unlock(inode.ino());
            }
            throw e;
        }
    }

    /**
     * Maps under the gate (a write) and {@code meta}; a write keeps the gate and its reservation until
     * {@code end}, or gives them back if this throws.
     */
    private IomapMapping mapLocked(IomapInode inode, long pos, long length, boolean write, boolean fault,
            boolean direct) throws IOException {
        boolean gated = false;
        try {
            if (write) {
                tx.makeRoom(writeReservation());
                tx.gate.readLock().lock();
                gated = true;
            }
            tx.meta.lock();
            try {
                if (direct && write) {
                    return IomapMapping.of(mapDirectWrite(inode, pos, length));
                }
                return IomapMapping.of(map(inode, pos, length, write || fault, fault));
            } finally {
                tx.meta.unlock();
            }
        } catch (IOException | RuntimeException e) {
            if (gated) {
                tx.gate.readLock().unlock();
                tx.release(writeReservation());
            }
            throw e;
        }
    }

    /**
     * Whether a request holds the transaction gate from {@code begin} to {@code end}: a write or zeroing
     * through {@code write_begin}, not a write fault, which the core maps with the folio locked (a commit
     * holding the gate may be waiting for that folio); a fault's new blocks are zeroed on the device
     * instead, so no commit can expose them unwritten.
     */
    private static boolean gated(Set<IomapRequest> request) {
        return request.contains(IomapRequest.WRITE) && !request.contains(IomapRequest.REPORT)
                && !request.contains(IomapRequest.FAULT);
    }

    /**
     * Blocks one write mapping may add to the running transaction: its metadata, and for a journaled
     * file its data (whose mappings are capped to {@link Gfs2Transactions#jdataMappingBlocks}).
     */
    private long writeReservation() {
        return Gfs2Transactions.SMALL + tx.jdataMappingBlocks();
    }

    /**
     * The inode glock mode a request needs: EX to change the cache, SH to read it; none for a write
     * fault, which the core asks for with the folio locked (taking a glock there would invert the lock
     * order: GFS2 takes it in page_mkwrite before the page lock).
     */
    private static LockMode glockMode(Set<IomapRequest> request) {
        if (request.contains(IomapRequest.FAULT)) {
            return null;
        }
        boolean changes = request.contains(IomapRequest.WRITE) || request.contains(IomapRequest.ZERO)
                || request.contains(IomapRequest.UNSHARE);
        return changes && !request.contains(IomapRequest.REPORT) ? LockMode.EX : LockMode.SH;
    }

    /**
     * A direct write: only an overwrite of allocated blocks within EOF of a file that is neither
     * stuffed nor journaled is done directly; anything else goes to the page cache
     * ({@link DirectFallbackException}), as {@code gfs2_iomap_begin} answers {@code -ENOTBLK} and
     * {@code gfs2_file_direct_write} defers extending and journaled writes to the buffered path.
     * Caller holds {@code meta}.
     */
    private Iomap mapDirectWrite(IomapInode inode, long pos, long length) throws IOException {
        Dinode d = volume.dinode(inode.ino());
        if (pos + length > inode.size() || d.stuffed() || mount.jdata(d)) {
            throw new DirectFallbackException("gfs2-like: a direct write to inode " + inode.ino() + " at " + pos
                    + " that extends, or goes to a stuffed or journaled file, is written buffered");
        }
        int bs = volume.blockSize;
        long first = pos / bs;
        FileTree.Run run = tree.lookup(d, first, Math.max(1, Math.ceilDiv(pos + length, (long) bs) - first));
        if (run.hole()) {
            throw new DirectFallbackException("gfs2-like: a direct write to inode " + inode.ino() + " at " + pos
                    + " meets a hole: allocating writes are written buffered");
        }
        return mapping(run, IomapType.MAPPED, EnumSet.noneOf(IomapFlag.class));
    }

    private Iomap map(IomapInode inode, long pos, long length, boolean allocate, boolean zeroNew) throws IOException {
        Dinode d = volume.dinode(inode.ino());
        int bs = volume.blockSize;
        int capacity = volume.layout.stuffedCapacity();
        if (d.stuffed() && allocate && pos + length > capacity) {
            mount.unstuff(d, inode.size());
        }
        if (d.stuffed()) {
            if (pos < capacity) {
                return new Iomap(0, capacity, IomapType.INLINE, Set.of(), Iomap.NULL_ADDR, d.inline, 0);
            }
            return Iomap.hole(pos, length);
        }
        long first = pos / bs;
        long max = Math.max(1, Math.ceilDiv(pos + length, (long) bs) - first);
        if (allocate && mount.jdata(d)) {
            max = Math.min(max, tx.jdataMappingBlocks());
        }
        FileTree.Run run = tree.lookup(d, first, max);
        if (run.hole() && allocate) {
            run = tree.allocate(d, first, max);
            volume.newBlocks.computeIfAbsent(d.ino, k -> new java.util.ArrayList<>())
                    .add(new long[] {run.block(), run.block() + run.count()});
            if (zeroNew) {
                volume.zeroData(run.address(), run.count());
            } else if (!mount.jdata(d)) {
                volume.ordered.put(d.ino, inode);
            }
            return mapping(run, IomapType.MAPPED, EnumSet.of(IomapFlag.NEW));
        }
        return mapping(run, run.hole() ? IomapType.HOLE : IomapType.MAPPED, EnumSet.noneOf(IomapFlag.class));
    }

    private Iomap mapping(FileTree.Run run, IomapType type, EnumSet<IomapFlag> flags) {
        int bs = volume.blockSize;
        if (run.boundary()) {
            flags.add(IomapFlag.BOUNDARY);
        }
        long address = run.hole() ? Iomap.NULL_ADDR : run.address() * bs;
        return new Iomap(run.block() * bs, run.count() * bs, type, flags, address, null, 0);
    }

    @Override
    public void end(IomapInode inode, long pos, long length, long written, Set<IomapRequest> request, Iomap iomap)
            throws IOException {
        boolean write = gated(request);
        try {
            boolean persists = request.contains(IomapRequest.WRITE) || request.contains(IomapRequest.ZERO)
                    || request.contains(IomapRequest.FAULT);
            if (iomap.type() == IomapType.INLINE && written > 0 && persists) {
                tx.meta.lock();
                try {
                    Dinode d = volume.dinode(inode.ino());
                    d.size = Math.min(inode.size(), volume.layout.stuffedCapacity());
                    volume.dirtyDinode(d);
                } finally {
                    tx.meta.unlock();
                }
            } else {
                if (iomap.has(IomapFlag.NEW) && written < length) {
                    punchUnwritten(inode, pos, written, iomap);
                }
                if (write && written > 0) {
                    growSize(inode);
                }
            }
        } finally {
            if (write) {
                tx.gate.readLock().unlock();
                tx.release(writeReservation());
                mount.node.unlockRgrps();
            }
            // begin took a use unless this thread holds the inode for the whole operation
            if (glockMode(request) != null && !mount.node.holdsInode(inode.ino())) {
                mount.glocks.unlock(inode.ino());
            }
        }
    }

    /** The write raised the in-memory size: the dinode's follows in the same transaction (gfs2's write_end). */
    private void growSize(IomapInode inode) throws IOException {
        tx.meta.lock();
        try {
            Dinode d = volume.dinode(inode.ino());
            if (!d.stuffed() && inode.size() > d.size) {
                d.size = inode.size();
                volume.dirtyDinode(d);
                if (!mount.jdata(d)) {
                    volume.ordered.put(d.ino, inode);
                }
            }
        } finally {
            tx.meta.unlock();
        }
    }

    /** {@code gfs2_iomap_end}: blocks this write allocated and did not reach are freed again. */
    private void punchUnwritten(IomapInode inode, long pos, long written, Iomap iomap) throws IOException {
        int bs = volume.blockSize;
        long from = written == 0 ? pos / bs : Math.ceilDiv(pos + written, (long) bs);
        long to = iomap.end() / bs;
        if (from >= to) {
            return;
        }
        tx.meta.lock();
        try {
            Dinode d = volume.dinode(inode.ino());
            tree.punch(d, from, to);
        } finally {
            tx.meta.unlock();
        }
    }

    /**
     * A failed data write leaves its blocks holding whatever they held before: blocks this transaction
     * allocated are punched again, so stale data never becomes readable; older blocks keep their old data.
     */
    @Override
    public void ioendCompleted(IomapInode inode, dev.iomap.spi.IoendCompletion completion) throws IOException {
        if (!completion.failed()) {
            return;
        }
        int bs = volume.blockSize;
        long from = completion.offset() / bs;
        long to = Math.ceilDiv(completion.end(), (long) bs);
        tx.meta.lock();
        try {
            java.util.List<long[]> ranges = volume.newBlocks.get(inode.ino());
            if (ranges == null) {
                return;
            }
            Dinode d = volume.dinode(inode.ino());
            for (long[] r : ranges) {
                long a = Math.max(r[0], from);
                long b = Math.min(r[1], to);
                if (a < b) {
                    tree.punch(d, a, b);
                }
            }
        } finally {
            tx.meta.unlock();
        }
    }

    @Override
    public WriteOps writeOps() {
        return jdataWrites;
    }

    /**
     * Journaled data: the copied blocks join the running transaction ({@code gfs2_trans_add_databufs}),
     * which the write's {@code begin} opened room in before any folio lock (lock order: transaction,
     * then folio).
     */
    private final WriteOps jdataWrites = new WriteOps() {
        @Override
        public void putFolio(IomapInode inode, long pos, int copied, Iomap iomap, Supplier<ByteBuffer> folio)
                throws IOException {
            if (copied == 0 || iomap.type() != IomapType.MAPPED) {
                return;
            }
            int bs = volume.blockSize;
            tx.meta.lock();
            try {
                if (!mount.jdata(volume.dinode(inode.ino()))) {
                    return;
                }
                long filePos = pos & -bs;
                ByteBuffer blocks = folio.get();
                for (int at = 0; at < blocks.limit(); at += bs) {
                    byte[] bytes = new byte[bs];
                    blocks.get(at, bytes);
                    volume.logData(iomap.deviceAddress(filePos + at) / bs, bytes);
                }
            } finally {
                tx.meta.unlock();
            }
        }
    };

    /**
     * {@code gfs2_writeback_submit}: journaled data is logged and committed first
     * ({@link #journalData}), then the ioend goes to the mount's own device: on a cluster node that is
     * the fenced device, so the core's data writeback stops with everything else once the node fenced
     * itself (the ioend fails with the fence's error and nothing reaches the device). On a single node
     * it is the core's device.
     */
    @Override
    public CompletableFuture<Void> writebackSubmit(IomapInode inode, WritebackIoend ioend) throws IOException {
        journalData(inode, ioend.range(), ioend.data());
        return volume.device.write(ioend.range().address(), ioend.data(), IoPurpose.DATA);
    }

    /** Journaled data: the ioend's bytes are logged and committed before the home write. */
    private void journalData(IomapInode inode, Iomap ioend, List<ByteBuffer> data) throws IOException {
        tx.meta.lock();
        try {
            if (!mount.jdata(volume.dinode(inode.ino()))) {
                return;
            }
        } finally {
            tx.meta.unlock();
        }
        int bs = volume.blockSize;
        int count = (int) (ioend.length() / bs);
        long[] blocks = new long[count];
        byte[][] bytes = new byte[count][bs];
        int i = 0;
        int at = 0;
        for (ByteBuffer part : data) {
            ByteBuffer b = part.duplicate();
            while (b.hasRemaining() && i < count) {
                int n = Math.min(bs - at, b.remaining());
                b.get(bytes[i], at, n);
                at += n;
                if (at == bs) {
                    blocks[i] = ioend.address() / bs + i;
                    i++;
                    at = 0;
                }
            }
        }
        tx.journalData(java.util.Arrays.copyOf(blocks, i), java.util.Arrays.copyOf(bytes, i));
    }

    /** {@code gfs2_writeback_range}: the blocks {@code begin} allocated, looked up, one run. */
    @Override
    public long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException {
        return wpc.addToIoend(mapBlocks(wpc.inode(), pos, length), pos, length);
    }

    private Iomap mapBlocks(IomapInode inode, long pos, long length) throws IOException {
        tx.meta.lock();
        try {
            Dinode d = volume.dinode(inode.ino());
            if (d.stuffed()) {
                throw new CorruptFileSystemException("writeback of stuffed inode " + d.ino + " at " + pos);
            }
            int bs = volume.blockSize;
            long first = pos / bs;
            FileTree.Run run = tree.lookup(d, first, Math.max(1, Math.ceilDiv(pos + length, (long) bs) - first));
            if (run.hole()) {
                throw new CorruptFileSystemException("inode " + d.ino + ": dirty data over a hole at " + pos
                        + " (every write allocates in begin)");
            }
            return mapping(run, IomapType.MAPPED, EnumSet.noneOf(IomapFlag.class));
        } finally {
            tx.meta.unlock();
        }
    }
}
