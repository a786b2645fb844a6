package dev.iomap.core;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.WriteOps;
import dev.iomap.spi.WritebackIoend;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.Set;

/**
 * A journaled-data test adapter: the mapping of {@link SparseTestOps} (blocks allocated by a write's
 * {@code begin}, device offset = file offset + base), with the hooks a gfs2-like jdata file uses.
 * {@code getFolio}, {@code putFolio} (with a copy of the bytes it is shown) and {@code writebackSubmit}
 * (with a copy of each ioend's bytes) are recorded, in one event log that a {@link Device} wrapping
 * the cache's device shares, so the order of hooks and device writes can be asserted. It can be told
 * to fail one {@code getFolio}, one {@code putFolio} or the next {@code writebackSubmit}, and to report
 * the next {@code valid} check as stale.
 */
final class JdataTestOps implements IomapOps, MapBlocksWriteback, WriteOps {
    /** What one {@code putFolio} was shown: {@code blocks} starts at file offset {@code blocksPos}. */
    record Put(long pos, int copied, long blocksPos, byte[] blocks, boolean readOnly) {
    }

    /** What one {@code writebackSubmit} was shown: the ioend and its bytes, concatenated. */
    record Submit(Iomap ioend, int buffers, byte[] data, boolean readOnly) {
    }

    private final SparseTestOps mapping;
    private final List<String> events;
    private final List<Put> puts = new ArrayList<>();
    private final List<Submit> submits = new ArrayList<>();
    private final List<IoendCompletion> completions = new ArrayList<>();
    private long failGetAt = -1;
    private IOException getFailure;
    private long failPutAt = -1;
    private IOException putFailure;
    private IOException submitFailure;
    private boolean staleOnce;

    JdataTestOps(int blockSize, long base, List<String> events) {
        this.mapping = new SparseTestOps(blockSize, base);
        this.events = events;
    }

    /** A device that appends {@code "write <address> <bytes>"} to the event log before each write. */
    static final class Device extends ForwardingBlockDevice {
        private final List<String> events;

        Device(BlockDevice delegate, List<String> events) {
            super(delegate);
            this.events = events;
        }

        @Override
        public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
            long bytes = srcs.stream().mapToLong(ByteBuffer::remaining).sum();
            synchronized (events) {
                events.add("write " + offset + " " + bytes);
            }
            return super.write(offset, srcs, purpose);
        }
    }

    synchronized List<Put> puts() {
        return List.copyOf(puts);
    }

    synchronized List<Submit> submits() {
        return List.copyOf(submits);
    }

    synchronized List<IoendCompletion> completions() {
        return List.copyOf(completions);
    }

    /** Forgets what was recorded (the shared event log too). */
    synchronized void clear() {
        puts.clear();
        submits.clear();
        completions.clear();
        synchronized (events) {
            events.clear();
        }
    }

    /** Makes the {@code getFolio} for file offset {@code pos} throw {@code failure} (after recording). */
    synchronized void failGetAt(long pos, IOException failure) {
        failGetAt = pos;
        getFailure = failure;
    }

    /** Makes the {@code putFolio} for file offset {@code pos} throw {@code failure} (after recording). */
    synchronized void failPutAt(long pos, IOException failure) {
        failPutAt = pos;
        putFailure = failure;
    }

    /** Makes the next {@code writebackSubmit} throw {@code failure} (after recording). */
    synchronized void failNextSubmit(IOException failure) {
        submitFailure = failure;
    }

    /** Makes the next {@code valid} check report the mapping stale. */
    synchronized void staleOnce() {
        staleOnce = true;
    }

    private void event(String event) {
        synchronized (events) {
            events.add(event);
        }
    }

    private static byte[] bytes(List<ByteBuffer> buffers) {
        int total = buffers.stream().mapToInt(ByteBuffer::remaining).sum();
        byte[] out = new byte[total];
        int at = 0;
        for (ByteBuffer buffer : buffers) {
            int n = buffer.remaining();
            buffer.duplicate().get(out, at, n);
            at += n;
        }
        return out;
    }

    @Override
    public WriteOps writeOps() {
        return this;
    }

    @Override
    public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request) {
        return mapping.begin(inode, pos, length, request);
    }

    @Override
    public void end(IomapInode inode, long pos, long length, long written, Set<IomapRequest> request,
            Iomap iomap) {
        mapping.end(inode, pos, length, written, request, iomap);
    }

    @Override
    public synchronized boolean valid(IomapInode inode, Iomap iomap) {
        boolean stale = staleOnce;
        staleOnce = false;
        return !stale;
    }

    @Override
    public synchronized void getFolio(IomapInode inode, long pos, int length, Iomap iomap)
            throws IOException {
        event("get " + pos + " " + length);
        if (pos == failGetAt) {
            throw getFailure;
        }
    }

    @Override
    public synchronized void putFolio(IomapInode inode, long pos, int copied, Iomap iomap,
            Supplier<ByteBuffer> folio) throws IOException {
        ByteBuffer blocks = folio.get();
        event("put " + pos + " " + copied);
        long blocksPos = pos & -inode.blockSize();
        puts.add(new Put(pos, copied, blocksPos, bytes(List.of(blocks)), blocks.isReadOnly()));
        if (pos == failPutAt) {
            throw putFailure;
        }
    }

    @Override
    public Iomap mapBlocks(IomapInode inode, long pos, long length) {
        return mapping.mapBlocks(inode, pos, length);
    }

    @Override
    public CompletableFuture<Void> writebackSubmit(IomapInode inode, WritebackIoend ioend) throws IOException {
        record(ioend.range(), ioend.data());
        return ioend.submit();
    }

    private synchronized void record(Iomap ioend, List<ByteBuffer> data) throws IOException {
        event("submit " + ioend.offset() + " " + ioend.length() + " at " + ioend.address());
        boolean readOnly = data.stream().allMatch(ByteBuffer::isReadOnly);
        submits.add(new Submit(ioend, data.size(), bytes(data), readOnly));
        IOException failure = submitFailure;
        submitFailure = null;
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public synchronized void ioendCompleted(IomapInode inode, IoendCompletion completion) {
        event("completed " + completion.offset() + " " + completion.length()
                + (completion.failed() ? " failed" : ""));
        completions.add(completion);
    }
}
