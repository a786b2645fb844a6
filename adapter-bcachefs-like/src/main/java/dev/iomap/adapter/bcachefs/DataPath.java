package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.DataSpace;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.ReadOps;
import dev.iomap.spi.WriteOps;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackIoend;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The data path of a bcachefs-like mount: mappings for the core ({@link IomapOps}), per-block
 * reservations taken for every block a write dirties ({@link WriteOps}), copy-on-write writeback
 * that allocates, checksums and compresses each extent ({@link WritebackOps}) and commits its key in
 * one transaction at completion, and reads that verify whole extents ({@link ReadOps}).
 *
 * <p>Never in place: {@code begin} for a write maps the current extent only so that the core can
 * read edge blocks through {@link #readFolioRange}; writeback always writes new blocks, except
 * unshared blocks of a {@code nocow} filesystem. A direct write ({@code WRITE|DIRECT}) is mapped as
 * writeback maps dirty data ({@link #writebackRange}), so it takes the same path: new blocks, checksums and
 * compression at submission, one key per extent committed at completion.
 */
final class DataPath implements IomapOps, WriteOps, WritebackOps, ReadOps {
    private final BcachefsVolume volume;
    private final ExtentReader reader;
    private final LongFunction<FileState> states;
    private final DataSpace space;
    private final DataReserve reserve;
    private final int bs;

    DataPath(BcachefsVolume volume, ExtentReader reader, LongFunction<FileState> states) {
        this.volume = volume;
        this.reader = reader;
        this.states = states;
        this.space = volume.store.space();
        this.reserve = volume.reserve;
        this.bs = volume.blockSize;
    }

    @Override
    public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request) throws IOException {
        if (request.contains(IomapRequest.DIRECT) && request.contains(IomapRequest.WRITE)) {
            // Never in place, direct or not: new blocks now, checksummed (and compressed) at submission by
            // writebackSubmit, the key committed by ioendCompleted, as for writeback (an atomic write's keys all
            // in one transaction by atomicWriteCompleted, and never in place, also with nocow).
            return IomapMapping.of(mapBlocks(inode, pos, length, request.contains(IomapRequest.ATOMIC)));
        }
        volume.checkLive();
        FileState state = states.apply(inode.ino());
        if (!opensWrite(request)) {
            return map(inode, state, pos, length, request);
        }
        long first = pos / bs;
        state.beginWrite(first, wantEnd(pos, length));
        try {
            return map(inode, state, pos, length, request);
        } catch (IOException | RuntimeException e) {
            state.endWrite(first);
            throw e;
        }
    }

    /**
     * @return whether {@code begin} hands out a write mapping that holds reservations, which writeback
     *     taking one of them makes stale (see {@link FileState})
     */
    private static boolean opensWrite(Set<IomapRequest> request) {
        boolean writing = request.contains(IomapRequest.WRITE) || request.contains(IomapRequest.FAULT)
                || request.contains(IomapRequest.ZERO) || request.contains(IomapRequest.UNSHARE);
        return writing && !request.contains(IomapRequest.REPORT) && !request.contains(IomapRequest.DIRECT);
    }

    /** @return the first block past {@code [pos, pos + length)}, without overflow */
    private long wantEnd(long pos, long length) {
        long endByte = length > Long.MAX_VALUE - bs - pos ? Long.MAX_VALUE - bs : pos + length;
        return Math.ceilDiv(endByte, bs);
    }

    private IomapMapping map(IomapInode inode, FileState state, long pos, long length, Set<IomapRequest> request)
            throws IOException {
        long cookie = state.generation.get();
        long first = pos / bs;
        long wantEnd = wantEnd(pos, length);
        boolean writing = request.contains(IomapRequest.WRITE) || request.contains(IomapRequest.FAULT)
                || request.contains(IomapRequest.ZERO) || request.contains(IomapRequest.UNSHARE);
        Optional<BcachefsVolume.Extent> next = volume.extentAtOrAfter(inode.ino(), first);
        boolean mapped = next.isPresent() && next.get().start() <= first;
        long end;
        if (mapped) {
            end = writing ? Math.min(next.get().end(), wantEnd) : next.get().end();
        } else {
            end = next.isPresent() ? Math.min(next.get().start(), wantEnd) : wantEnd;
            if (!writing && next.isPresent()) {
                end = next.get().start();
            }
        }
        if (writing && !request.contains(IomapRequest.REPORT) && (mapped || !request.contains(IomapRequest.ZERO))
                && !(mapped && inPlace(next.get()))) {
            end = state.reserve(first, end, reserve);
        }
        Iomap iomap;
        if (mapped) {
            BcachefsVolume.Extent e = next.get();
            long address = e.value().narrowable() ? e.value().deviceBlockOf(first - e.start()) * bs
                    : e.value().devStart() * bs;
            // A report says whether the blocks are shared (reflinked), as bcachefs's fiemap does for
            // reflink pointers; the write paths do not need it (they copy on write anyway).
            Set<IomapFlag> flags = request.contains(IomapRequest.REPORT) && shared(e) ? EnumSet.of(IomapFlag.SHARED)
                    : Set.of();
            iomap = new Iomap(first * bs, (end - first) * bs, IomapType.MAPPED, flags, address, null, cookie);
        } else {
            iomap = Iomap.hole(first * bs, (end - first) * bs).withValidityCookie(cookie);
        }
        return IomapMapping.of(iomap);
    }

    /** @return whether some block of {@code e} is referenced more than once (by a clone) */
    private boolean shared(BcachefsVolume.Extent e) {
        for (long b = e.value().devStart(); b < e.value().devStart() + e.value().physBlocks(); b++) {
            if (space.refCount(b) > 1) {
                return true;
            }
        }
        return false;
    }

    /** @return whether writeback may overwrite {@code e}'s blocks in place (nocow, no checksum, not shared) */
    private boolean inPlace(BcachefsVolume.Extent e) {
        if (!volume.config.nocow() || !e.value().narrowable()) {
            return false;
        }
        for (long b = e.value().devStart(); b < e.value().devStart() + e.value().physBlocks(); b++) {
            if (space.refCount(b) != 1) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void end(IomapInode inode, long pos, long length, long written, Set<IomapRequest> request, Iomap iomap)
            throws IOException {
        if (request.contains(IomapRequest.REPORT) || request.isEmpty()) {
            return;
        }
        FileState state = states.apply(inode.ino());
        try {
            long reach = Math.max(length, iomap.end() - pos);
            if (written < reach) {
                inode.releaseDelalloc(pos, reach, written,
                        (file, offset, bytes) -> state.release(offset / bs, Math.ceilDiv(offset + bytes, bs), reserve));
            }
        } finally {
            if (opensWrite(request)) {
                state.endWrite(pos / bs);
            }
        }
    }

    @Override
    public boolean valid(IomapInode inode, Iomap iomap) {
        return iomap.validityCookie() == states.apply(inode.ino()).generation.get();
    }

    @Override
    public WriteOps writeOps() {
        return this;
    }

    @Override
    public ReadOps readOps() {
        return this;
    }

    /**
     * Marks the copied blocks dirty in the reservation state. Each holds its reservation: {@code begin}
     * took it, and writeback taking it before the copy made the mapping stale ({@link FileState}), so
     * the core looked the range up again, reserving before it copied. A block found without one anyway
     * is reserved now, as the last resort; only that can fail the write after its copy.
     */
    @Override
    public void putFolio(IomapInode inode, long pos, int copied, Iomap iomap, Supplier<ByteBuffer> blocks)
            throws IOException {
        if (copied == 0) {
            return;
        }
        FileState state = states.apply(inode.ino());
        long first = pos / bs;
        long end = Math.ceilDiv(pos + copied, bs);
        boolean inPlaceMapping = volume.config.nocow() && iomap.type() == IomapType.MAPPED;
        if (!inPlaceMapping && !state.reserved(first, end)) {
            long covered = state.reserve(first, end, reserve);
            if (covered < end) {
                throw new dev.iomap.api.NoSpaceException("bcachefs-like: no space left for blocks " + covered + ".."
                        + end + " of inode " + inode.ino());
            }
        }
        state.markDirty(first, end);
    }

    @Override
    public void readFolioRange(IomapInode inode, Iomap iomap, long pos, ByteBuffer dst, BlockDevice device)
            throws IOException {
        long block = pos / bs;
        long end = block + dst.remaining() / bs;
        while (block < end) {
            Optional<BcachefsVolume.Extent> next = volume.extentAtOrAfter(inode.ino(), block);
            long stop = next.isPresent() ? Math.min(end, Math.max(block, next.get().start())) : end;
            if (stop > block) {
                int bytes = (int) ((stop - block) * bs);
                dst.put(new byte[bytes]);
                block = stop;
                continue;
            }
            BcachefsVolume.Extent e = next.get();
            long n = Math.min(end, e.end()) - block;
            ByteBuffer slice = dst.slice(dst.position(), (int) (n * bs));
            reader.read(e, block - e.start(), slice);
            dst.position(dst.position() + (int) (n * bs));
            block += n;
        }
    }

    /**
     * {@code bch2_writepages}' part of writeback: new blocks for the dirty range ({@link #mapBlocks}),
     * added to the ioend. If they cannot be had, the reservations of the folio's dirty data from
     * {@code pos} on are given back: that data will not be written.
     */
    @Override
    public long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException {
        try {
            return wpc.addToIoend(mapBlocks(wpc.inode(), pos, length, false), pos, length);
        } catch (IOException | RuntimeException e) {
            states.apply(wpc.inode().ino()).release(pos / bs, Math.ceilDiv(Math.max(endPos, pos + length), bs), reserve);
            throw e;
        }
    }

    /**
     * New blocks for the dirty range at {@code pos} (in place for unshared {@code nocow} data, unless
     * {@code atomic}: an atomic write is always out of place), one run.
     */
    Iomap mapBlocks(IomapInode inode, long pos, long length, boolean atomic) throws IOException {
        volume.checkLive();
        FileState state = states.apply(inode.ino());
        long first = pos / bs;
        long want = Math.min(Math.ceilDiv(length, bs), volume.config.extentMaxBytes() / bs);
        if (volume.config.nocow() && !atomic) {
            Optional<BcachefsVolume.Extent> e = volume.extentAtOrAfter(inode.ino(), first);
            if (e.isPresent() && e.get().start() <= first && inPlace(e.get())) {
                long count = Math.min(want, e.get().end() - first);
                state.release(first, first + count, reserve);
                long dev = e.get().value().deviceBlockOf(first - e.get().start());
                state.planned.add(new FileState.PlanKey(first, dev), new FileState.Planned(first, dev, count, true));
                return new Iomap(first * bs, count * bs, IomapType.MAPPED, Set.of(IomapFlag.BOUNDARY), dev * bs, null,
                        state.generation.get());
            }
        }
        long taken = state.take(first, want, reserve);
        BlockRange run = space.allocate(taken, -1);
        reader.forget(run);
        if (run.length() < taken) {
            state.giveBack(first + run.length(), first + taken);
        }
        state.planned.add(new FileState.PlanKey(first, run.start()),
                new FileState.Planned(first, run.start(), run.length(), false));
        return new Iomap(first * bs, run.length() * bs, IomapType.MAPPED, Set.of(IomapFlag.BOUNDARY),
                run.start() * bs, null, state.generation.get());
    }

    /**
     * bcachefs's own write path: the ioend's bytes checksummed (and compressed, when that saves blocks)
     * into one extent value kept for {@link #ioendCompleted}, then written at the ioend's address.
     */
    @Override
    public CompletableFuture<Void> writebackSubmit(IomapInode inode, WritebackIoend submitted) {
        Iomap ioend = submitted.range();
        List<ByteBuffer> data = submitted.data();
        try {
            FileState state = states.apply(inode.ino());
            long first = ioend.offset() / bs;
            int blocks = (int) (ioend.length() / bs);
            long devStart = ioend.address() / bs;
            FileState.Planned plan = state.planned.take(new FileState.PlanKey(first, devStart));
            if (plan != null && plan.blocks() > blocks) {
                state.planned.add(new FileState.PlanKey(first + blocks, plan.devStart() + blocks),
                        new FileState.Planned(first + blocks, plan.devStart() + blocks, plan.blocks() - blocks,
                                plan.inPlace()));
            }
            boolean inPlace = plan != null && plan.inPlace();
            byte[] bytes = new byte[blocks * bs];
            int at = 0;
            for (ByteBuffer b : data) {
                int n = b.remaining();
                b.duplicate().get(bytes, at, n);
                at += n;
            }
            int checksumType = volume.config.checksum();
            ExtentValue value = new ExtentValue(devStart, blocks, bytes.length, 0, blocks, blocks,
                    inPlace ? Codecs.CSUM_NONE : checksumType, Codecs.COMPRESS_NONE,
                    inPlace ? 0 : Codecs.checksum(checksumType, bytes, bytes.length));
            byte[] out = bytes;
            int compression = volume.config.compression();
            if (!inPlace && compression != Codecs.COMPRESS_NONE) {
                byte[] packed = Codecs.compress(compression, bytes);
                int packedBlocks = Math.ceilDiv(packed.length, bs);
                if (packedBlocks < blocks) {
                    out = java.util.Arrays.copyOf(packed, packedBlocks * bs);
                    space.release(new BlockRange(devStart + packedBlocks, blocks - packedBlocks));
                    value = new ExtentValue(devStart, packedBlocks, packed.length, 0, blocks, blocks, checksumType,
                            compression, Codecs.checksum(checksumType, packed, packed.length));
                }
            }
            state.submitted.add(new FileState.SubmitKey(ioend.offset(), ioend.address(), ioend.length()),
                    new FileState.Submitted(value, blocks, inPlace));
            return volume.device().write(ioend.address(), List.of(ByteBuffer.wrap(out)), IoPurpose.DATA);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The keys of all the runs of an atomic write, and the size, in one transaction: the old extents over
     * the whole range dropped at once (a transaction's own changes are not visible to a second
     * {@code dropRange}), then each run's extent inserted. A failed write is completed run by run as
     * {@link #ioendCompleted} completes a failed ioend: the new blocks are released, the file unchanged.
     */
    @Override
    public void atomicWriteCompleted(IomapInode inode, List<IoendCompletion> runs) throws IOException {
        if (runs.getFirst().failed()) {
            for (IoendCompletion run : runs) {
                ioendCompleted(inode, run);
            }
            return;
        }
        FileState state = states.apply(inode.ino());
        List<FileState.Submitted> submitted = new java.util.ArrayList<>(runs.size());
        for (IoendCompletion run : runs) {
            FileState.Submitted s = state.submitted.take(
                    new FileState.SubmitKey(run.offset(), run.address(), run.length()));
            if (s == null || s.inPlace()) {
                throw new IOException("bcachefs-like: run at " + run.offset() + " of an atomic write to inode "
                        + inode.ino() + " completed without being submitted out of place");
            }
            submitted.add(s);
        }
        long first = runs.getFirst().offset() / bs;
        long sizeBlocks = Math.ceilDiv(inode.size(), bs);
        volume.meta.lock();
        try {
            InodeRecord r = volume.inode(inode.ino()).copy();
            BcachefsVolume.Tx tx = volume.tx();
            BcachefsVolume.RefDeltas refs = new BcachefsVolume.RefDeltas();
            long last = runs.getLast().offset() / bs + submitted.getLast().allocatedBlocks();
            if (first < sizeBlocks) {
                volume.dropRange(tx, r, first, Math.min(last, sizeBlocks), refs, Integer.MAX_VALUE);
            }
            for (int i = 0; i < runs.size(); i++) {
                insertRun(tx, r, refs, runs.get(i).offset() / bs, submitted.get(i), sizeBlocks);
            }
            r.size = Math.max(r.size, Math.min(inode.size(), runs.getLast().end()));
            tx.put(r);
            refs.applyTo(tx.update);
            tx.commit();
            volume.cache(r);
            state.generation.incrementAndGet();
        } finally {
            volume.meta.unlock();
        }
    }

    /**
     * Inserts the extent of a run written out of place at file block {@code first}, trimmed to the size
     * ({@code sizeBlocks}); the blocks past it are released. The range must have been dropped in
     * {@code tx}.
     */
    private void insertRun(BcachefsVolume.Tx tx, InodeRecord r, BcachefsVolume.RefDeltas refs, long first, FileState.Submitted s,
            long sizeBlocks) {
        long end = first + s.allocatedBlocks();
        if (first >= sizeBlocks) {
            space.release(s.value().physical());
            return;
        }
        long keyEnd = Math.min(end, sizeBlocks);
        ExtentValue v = keyEnd == end ? s.value() : s.value().fragment(0, (int) (keyEnd - first), bs);
        if (keyEnd < end && v.narrowable()) {
            space.release(new BlockRange(v.devStart() + v.physBlocks(), end - keyEnd));
        }
        volume.insert(tx, r, keyEnd, v, refs);
    }

    @Override
    public void ioendCompleted(IomapInode inode, IoendCompletion completion) throws IOException {
        FileState state = states.apply(inode.ino());
        FileState.Submitted s = state.submitted.take(
                new FileState.SubmitKey(completion.offset(), completion.address(), completion.length()));
        if (s == null && completion.failed()) {
            FileState.Planned plan = state.planned.take(
                    new FileState.PlanKey(completion.offset() / bs, completion.address() / bs));
            if (plan != null && !plan.inPlace()) {
                space.release(new BlockRange(plan.devStart(), plan.blocks()));
            }
            return;
        }
        if (s == null) {
            throw new IOException("bcachefs-like: ioend at " + completion.offset() + " of inode " + inode.ino()
                    + " completed without being submitted");
        }
        if (completion.failed()) {
            if (!s.inPlace()) {
                space.release(s.value().physical());
            }
            return;
        }
        long first = completion.offset() / bs;
        long end = first + s.allocatedBlocks();
        volume.meta.lock();
        try {
            InodeRecord r = volume.inode(inode.ino()).copy();
            BcachefsVolume.Tx tx = volume.tx();
            BcachefsVolume.RefDeltas refs = new BcachefsVolume.RefDeltas();
            long sizeBlocks = Math.ceilDiv(inode.size(), bs);
            if (!s.inPlace()) {
                if (first < sizeBlocks) {
                    volume.dropRange(tx, r, first, Math.min(end, sizeBlocks), refs, Integer.MAX_VALUE);
                }
                insertRun(tx, r, refs, first, s, sizeBlocks);
            }
            r.size = Math.max(r.size, Math.min(inode.size(), completion.end()));
            tx.put(r);
            refs.applyTo(tx.update);
            tx.commit();
            volume.cache(r);
            state.generation.incrementAndGet();
        } finally {
            volume.meta.unlock();
        }
    }
}
