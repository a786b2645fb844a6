package dev.iomap.core;

import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.WriteOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * An adapter for seek tests: each block is a hole (no entry), {@code UNWRITTEN} or {@code MAPPED} at
 * its identity address. A write maps what is there and allocates nothing (a hole stays a hole until
 * writeback allocates it, as an adapter without delayed allocation may do); {@code mapBlocks} makes
 * the dirty block {@code MAPPED}, or, once {@link #publishAtCompletion} is called, only the ioend's
 * completion does (as a copy-on-write remap does). Every change bumps the validity cookie. Records every request set
 * {@code begin} is given, and runs a hook once after building the mapping of the next {@code REPORT}.
 */
final class ExtentTestOps implements IomapOps, WriteOps, MapBlocksWriteback {
    private final int blockSize;
    private final TreeMap<Long, IomapType> blocks = new TreeMap<>();
    private final List<Set<IomapRequest>> requests = new ArrayList<>();
    private long cookie;
    private boolean publishAtCompletion;
    private Runnable afterNextReport;
    /** Whether a mapping asked for without waiting fails, as a cluster lock that cannot be had at once. */
    private boolean refuseNowait;

    ExtentTestOps(int blockSize) {
        this.blockSize = blockSize;
    }

    /** Sets blocks {@code [first, first + count)} to {@code type} (null: a hole). */
    synchronized void set(long first, long count, IomapType type) {
        for (long block = first; block < first + count; block++) {
            if (type == null) {
                blocks.remove(block);
            } else {
                blocks.put(block, type);
            }
        }
        cookie++;
    }

    synchronized void publishAtCompletion() {
        publishAtCompletion = true;
    }

    synchronized List<Set<IomapRequest>> requests() {
        return List.copyOf(requests);
    }

    synchronized TreeMap<Long, IomapType> blocks() {
        return new TreeMap<>(blocks);
    }

    /** Makes every later {@code begin} with {@link IomapRequest#NOWAIT} fail, as if it would wait. */
    synchronized void refuseNowait() {
        refuseNowait = true;
    }

    synchronized void afterNextReport(Runnable hook) {
        afterNextReport = hook;
    }

    @Override
    public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request)
            throws IOException {
        Iomap iomap;
        Runnable hook;
        synchronized (this) {
            requests.add(Set.copyOf(request));
            if (refuseNowait && request.contains(IomapRequest.NOWAIT)) {
                throw new IOException("the mapping of " + pos + " would wait for a lock");
            }
            iomap = lookup(pos, length).withValidityCookie(cookie);
            hook = request.contains(IomapRequest.REPORT) ? afterNextReport : null;
            if (hook != null) {
                afterNextReport = null;
            }
        }
        if (hook != null) {
            hook.run();
        }
        return IomapMapping.of(iomap);
    }

    private Iomap lookup(long pos, long length) {
        long first = pos / blockSize;
        long last = (pos + length - 1) / blockSize;
        IomapType type = blocks.get(first);
        long end = first + 1;
        while (end <= last && blocks.get(end) == type) {
            end++;
        }
        long start = first * blockSize;
        long bytes = (end - first) * blockSize;
        if (type == null) {
            return Iomap.hole(start, bytes);
        }
        long address = type == IomapType.DELALLOC ? Iomap.NULL_ADDR : start;
        return new Iomap(start, bytes, type, Set.of(), address, null, 0);
    }

    @Override
    public WriteOps writeOps() {
        return this;
    }

    @Override
    public synchronized boolean valid(IomapInode inode, Iomap iomap) {
        return iomap.validityCookie() == cookie;
    }

    @Override
    public synchronized Iomap mapBlocks(IomapInode inode, long pos, long length) {
        long block = pos / blockSize;
        if (!publishAtCompletion) {
            set(block, 1, IomapType.MAPPED);
        }
        return Iomap.mapped(block * blockSize, blockSize, block * blockSize);
    }

    @Override
    public synchronized void ioendCompleted(IomapInode inode, IoendCompletion completion) {
        if (publishAtCompletion && !completion.failed()) {
            long first = completion.offset() / blockSize;
            set(first, (completion.end() + blockSize - 1) / blockSize - first, IomapType.MAPPED);
        }
    }
}
