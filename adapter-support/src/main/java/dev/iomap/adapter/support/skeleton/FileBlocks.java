package dev.iomap.adapter.support.skeleton;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import dev.iomap.api.NoSpaceException;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WriteOps;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The allocate-at-write pattern around a {@link BlockMapModel}: a write or write fault allocates the hole
 * it starts in and maps it MAPPED + NEW; the blocks stay fresh (NEW) until their write-back completes; a
 * short write gives back the fresh blocks it did not fill; every mapping carries the inode's validity
 * cookie, bumped at I/O completion and at every free. Calls hold the mount's monitor.
 */
final class FileBlocks implements IomapOps, WriteOps, WritebackOps {
    private final SkeletonMount mount;
    private final BlockMapModel model;
    private final Space space;
    private final int blockSize;
    /** Per inode, the file blocks allocated by writes whose write-back has not completed. */
    private final Map<Long, TreeSet<Long>> fresh = new HashMap<>();
    /** Per inode, the fresh blocks whose write-back was submitted ({@link #mapBlocks} mapped them). */
    private final Map<Long, TreeSet<Long>> submitted = new HashMap<>();

    FileBlocks(SkeletonMount mount, BlockMapModel model, Space space, int blockSize) {
        this.mount = mount;
        this.model = model;
        this.space = space;
        this.blockSize = blockSize;
    }

    /**
     * The run at {@code pos}; a write or fault allocates the hole it starts in (committing first if only
     * blocks freed since the last commit are left).
     */
    @Override
    public IomapMapping begin(IomapInode file, long pos, long length, Set<IomapRequest> request) throws IOException {
        synchronized (mount) {
            SkeletonInode inode = mount.inode(file.ino());
            long first = pos / blockSize;
            long limit = model.maxFileBlocks(blockSize);
            boolean allocating = request.contains(IomapRequest.WRITE) || request.contains(IomapRequest.FAULT);
            if (first >= limit) {
                // A folio reaching past the largest file size: nothing can be there.
                if (allocating) {
                    throw new InvalidRangeException("offset " + pos + " is past the largest file size "
                            + limit * blockSize);
                }
                long end = Layout.ceil(pos + length, blockSize) * blockSize;
                return IomapMapping.of(Iomap.hole(first * blockSize, end - first * blockSize)
                        .withValidityCookie(inode.cookie()));
            }
            long count = Math.min(Math.max(1, (pos + length - 1) / blockSize - first + 1), limit - first);
            Run run = model.map(space, inode, first, count);
            if (run.isHole() && allocating) {
                run = allocate(inode, first, run.count());
            }
            return IomapMapping.of(iomap(inode, run));
        }
    }

    private Run allocate(SkeletonInode inode, long first, long count) throws IOException {
        Run run;
        try {
            run = model.allocate(space, inode, first, count);
        } catch (NoSpaceException e) {
            if (!mount.commitFreesBlocks()) {
                throw e;
            }
            mount.commit();
            run = model.allocate(space, inode, first, count);
        }
        inode.bumpCookie();
        if (run.fresh()) {
            TreeSet<Long> blocks = fresh.computeIfAbsent(inode.ino(), k -> new TreeSet<>());
            for (long b = run.fileBlock(); b < run.end(); b++) {
                blocks.add(b);
            }
        }
        return run;
    }

    /** The run as an iomap, split where fresh blocks begin or end, fresh ones NEW. */
    private Iomap iomap(SkeletonInode inode, Run run) {
        long offset = run.fileBlock() * blockSize;
        if (run.isHole()) {
            return Iomap.hole(offset, run.count() * blockSize).withValidityCookie(inode.cookie());
        }
        TreeSet<Long> blocks = fresh.getOrDefault(inode.ino(), new TreeSet<>());
        boolean isNew = blocks.contains(run.fileBlock());
        long count = 1;
        while (count < run.count() && blocks.contains(run.fileBlock() + count) == isNew) {
            count++;
        }
        Iomap iomap = new Iomap(offset, count * blockSize, IomapType.MAPPED, isNew ? Set.of(IomapFlag.NEW) : Set.of(),
                run.deviceBlock() * blockSize, null, inode.cookie());
        return iomap;
    }

    /** A short write into NEW blocks gives back the fresh blocks it left clean. */
    @Override
    public void end(IomapInode file, long pos, long length, long written, Set<IomapRequest> request, Iomap iomap)
            throws IOException {
        if (written >= length || !iomap.has(IomapFlag.NEW) || !request.contains(IomapRequest.WRITE)) {
            return;
        }
        // The mount's lock is taken inside the punch callback, not around releaseDelalloc: the core locks
        // folios there, and writeback holds a folio lock when it calls writebackRange, which takes the mount's
        // lock (the order XFS keeps: folio locks, then ILOCK inside the punch callback).
        file.releaseDelalloc(pos, length, written, (f, offset, bytes) -> {
            synchronized (mount) {
                SkeletonInode inode = mount.inodeOrNull(file.ino());
                if (inode != null) {
                    freeFresh(inode, offset / blockSize, Layout.ceil(offset + bytes, blockSize),
                            FreeReason.SHORT_WRITE);
                }
            }
        });
    }

    /** @return this: the write ops are {@link #valid} alone */
    @Override
    public WriteOps writeOps() {
        return this;
    }

    /** Stale once an I/O completion or a free changed the inode's blocks. */
    @Override
    public boolean valid(IomapInode file, Iomap iomap) {
        synchronized (mount) {
            SkeletonInode inode = mount.inodeOrNull(file.ino());
            return inode != null && inode.cookie() == iomap.validityCookie();
        }
    }

    /** The dirty range's blocks ({@link #mapBlocks}) added to the ioend, outside the mount's lock. */
    @Override
    public long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException {
        return wpc.addToIoend(mapBlocks(wpc.inode(), pos, length), pos, length);
    }

    /** The model's run at {@code pos}, MAPPED; an {@link IOException} if a dirty block has none. */
    private Iomap mapBlocks(IomapInode file, long pos, long length) throws IOException {
        synchronized (mount) {
            SkeletonInode inode = mount.inode(file.ino());
            long first = pos / blockSize;
            Run run = model.map(space, inode, first, Math.max(1, Layout.ceil(pos + length, blockSize) - first));
            if (run.isHole()) {
                throw new IOException("write-back of inode " + inode.ino() + " at " + pos + " found no block");
            }
            TreeSet<Long> blocks = fresh.get(inode.ino());
            if (blocks != null && !blocks.subSet(first, run.end()).isEmpty()) {
                submitted.computeIfAbsent(inode.ino(), k -> new TreeSet<>()).addAll(blocks.subSet(first, run.end()));
            }
            return Iomap.mapped(first * blockSize, run.count() * blockSize, run.deviceBlock() * blockSize)
                    .withValidityCookie(inode.cookie());
        }
    }

    /**
     * Written blocks are no longer fresh, and the size on the device rises to what was written; a failed
     * write gives its fresh blocks back (they hold nothing). Bumps the cookie either way.
     */
    @Override
    public void ioendCompleted(IomapInode file, IoendCompletion completion) throws IOException {
        synchronized (mount) {
            SkeletonInode inode = mount.inodeOrNull(file.ino());
            if (inode == null) {
                return;
            }
            long first = completion.offset() / blockSize;
            long end = Layout.ceil(completion.end(), blockSize);
            if (completion.failed()) {
                freeFresh(inode, first, end, FreeReason.FAILED_WRITE);
                return;
            }
            forgetFresh(inode.ino(), first, end);
            long size = Math.min(file.size(), completion.end());
            if (size > inode.size()) {
                inode.setSize(size);
            }
            inode.bumpCookie();
        }
    }

    /** Frees {@code [from, to)} through the model; bumps the cookie. */
    void free(SkeletonInode inode, long from, long to, FreeReason reason) throws IOException {
        forgetFresh(inode.ino(), from, to);
        model.free(space, inode, from, to, reason);
        inode.bumpCookie();
    }

    /** Frees the fresh blocks in {@code [from, to)}, run by run. */
    private void freeFresh(SkeletonInode inode, long from, long to, FreeReason reason) throws IOException {
        TreeSet<Long> blocks = fresh.get(inode.ino());
        if (blocks == null) {
            return;
        }
        for (long b : List.copyOf(blocks.subSet(from, to))) {
            if (blocks.contains(b)) {
                long end = b + 1;
                while (end < to && blocks.contains(end)) {
                    end++;
                }
                free(inode, b, end, reason);
            }
        }
    }

    private void forgetFresh(long ino, long from, long to) {
        TreeSet<Long> blocks = fresh.get(ino);
        if (blocks != null) {
            blocks.subSet(from, to).clear();
        }
        TreeSet<Long> inFlight = submitted.get(ino);
        if (inFlight != null) {
            inFlight.subSet(from, to).clear();
        }
    }

    void forget(long ino) {
        fresh.remove(ino);
        submitted.remove(ino);
    }

    /**
     * Before a commit: zeroes the fresh blocks whose write-back has not even been submitted (dirty in
     * another file's cache, say), so that the commit, which records their pointers, never exposes what a
     * block's previous owner left there after a power cut. ext3's ordered mode writes such data back
     * before the commit; the skeleton cannot reach other files' caches from a commit, so it writes zeroes,
     * which a power cut may leave in place of data never made durable.
     *
     * @throws IOException if the device fails
     */
    void zeroUnsubmittedFresh() throws IOException {
        ByteBuffer zeroes = ByteBuffer.allocate(blockSize);
        for (Map.Entry<Long, TreeSet<Long>> entry : fresh.entrySet()) {
            SkeletonInode inode = mount.inodeOrNull(entry.getKey());
            TreeSet<Long> inFlight = submitted.getOrDefault(entry.getKey(), new TreeSet<>());
            for (long b : entry.getValue()) {
                if (inode != null && !inFlight.contains(b)) {
                    Run run = model.map(space, inode, b, 1);
                    if (!run.isHole()) {
                        // Written by the commit, before its journal transaction, so counted with the commit's
                        // (metadata) writes: a data-write error belongs to the file's own write-back.
                        BlockIo.write(space.device(), run.deviceBlock(), List.of(zeroes.duplicate()),
                                IoPurpose.METADATA);
                    }
                }
            }
        }
    }
}
