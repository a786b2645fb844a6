package dev.iomap.adapter.xfs;

import dev.iomap.spi.IomapMapping;

import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.ExtentMap;
import dev.iomap.adapter.support.ExtentState;
import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.adapter.support.ns.NamespaceInode;
import dev.iomap.adapter.support.ns.XattrSet;
import dev.iomap.api.FileType;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One inode in memory: its attributes, its two extent forks and, for a directory, its entries.
 *
 * <p>The <b>data fork</b> maps file blocks to written or unwritten extents (flagged shared when their
 * blocks have other owners) and to delayed allocations. The <b>COW fork</b> holds where writes to shared
 * blocks go: delayed allocations, then allocated staging extents (stored unwritten) until I/O completion
 * remaps them into the data fork. Delayed allocations live only in memory.
 *
 * <p><b>Locking.</b> The forks and {@link #sequence} are guarded by {@link #lock}; everything else, and
 * every change of a persisted extent, also needs the mount's metadata lock, taken first. The
 * {@link #sequence} is the validity cookie: bumped by every change of either fork.
 */
final class InodeState implements NamespaceInode {
    final long ino;
    final ReentrantLock lock = new ReentrantLock();
    final ExtentMap data = new ExtentMap();
    final ExtentMap cow = new ExtentMap();
    /** Extent-list blocks holding the forks when they do not fit in the slot, in order. */
    final List<Long> listBlocks = new ArrayList<>();
    /** Symbolic-link blocks holding a target too long for the slot, in order. */
    final List<Long> targetBlocks = new ArrayList<>();
    /** Extended-attribute blocks holding {@link #xattrs}, in order; none if there are no attributes. */
    final List<Long> xattrBlocks = new ArrayList<>();
    FileType type;
    int nlink;
    long diskSize;
    long parent;
    /** Permission bits, {@code 07777} at most. */
    int mode;
    int uid;
    int gid;
    /**
     * The four times. {@link #mtime} and {@link #ctime} are also written by
     * {@link XfsLikeMount#updateTimes} under {@link #lock} without the metadata lock; every other writer
     * holds both.
     */
    Instant atime = Instant.EPOCH;
    Instant mtime = Instant.EPOCH;
    Instant ctime = Instant.EPOCH;
    Instant btime = Instant.EPOCH;
    /** A symbolic link's target, else null. */
    byte[] target;
    /** A device node's number, else 0 (kept in the slot's device-number field). */
    long rdev;
    /** The inode flags, as bits of the slot's flags byte ({@link InodeCodec#slotBits}). */
    int fileFlags;
    /** The extended attributes; never null. */
    XattrSet xattrs = new XattrSet();
    DirectoryBlocks directory;
    /** The validity cookie: bumped on every change of either fork. Written under {@link #lock}. */
    volatile long sequence;
    /**
     * The in-memory size, or the end of the write in progress if larger: delayed allocations past it
     * are speculative preallocation and may be trimmed. Guarded by {@link #lock}.
     */
    long protectedEnd;
    /**
     * The last overwrite mapping handed out: a whole written or unwritten data extent, valid while
     * {@link #sequence} is still {@link #overwriteSequence} (no fork changed since). Guarded by
     * {@link #lock}.
     */
    IomapMapping overwriteMapping;
    long overwriteSequence = -1;
    /**
     * Device blocks {@code [boundsLow, boundsHigh)} spanning every allocated extent of both forks, as of
     * validity cookie {@code boundsSequence}: lets the allocator's reference check skip this inode.
     * Guarded by the mount's metadata lock (allocated extents change only under it).
     */
    private long boundsSequence = -1;
    private long boundsLow;
    private long boundsHigh;

    InodeState(long ino, FileType type) {
        this.ino = ino;
        this.type = type;
    }

    /** Sets all four times to {@code now}: a new inode. */
    void born(Instant now) {
        atime = now;
        mtime = now;
        ctime = now;
        btime = now;
    }

    /** The contents changed: mtime and ctime are {@code now}. Takes {@link #lock} (reentrant). */
    void modified(Instant now) {
        lock.lock();
        try {
            mtime = now;
            ctime = now;
        } finally {
            lock.unlock();
        }
    }

    /** The inode changed (names, attributes): ctime is {@code now}. Takes {@link #lock} (reentrant). */
    void statusChanged(Instant now) {
        lock.lock();
        try {
            ctime = now;
        } finally {
            lock.unlock();
        }
    }

    /** @return device blocks held for the target and the extended attributes */
    int attachedBlocks() {
        return targetBlocks.size() + xattrBlocks.size();
    }

    boolean isDirectory() {
        return type == FileType.DIRECTORY;
    }

    /** @return the extents of the data fork that are written to the device, in order */
    List<Extent> persistedData() {
        return persisted(data);
    }

    /** @return the allocated extents of the COW fork, in order */
    List<Extent> persistedCow() {
        return persisted(cow);
    }

    /** @return extents stored for this inode, both forks */
    int persistedExtentCount() {
        return persistedData().size() + persistedCow().size();
    }

    /** @return whether any data-fork extent is flagged shared */
    boolean hasShared() {
        for (Extent extent : data.extents()) {
            if (extent.shared()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether an allocated extent of either fork may lie in device blocks {@code [start, end)}: false
     * means none does. Caller holds the mount's metadata lock.
     */
    boolean mayReference(long start, long end) {
        long seen = sequence;
        if (seen != boundsSequence) {
            long low = Long.MAX_VALUE;
            long high = Long.MIN_VALUE;
            lock.lock();
            try {
                for (Extent extent : persisted(data)) {
                    low = Math.min(low, extent.deviceBlock());
                    high = Math.max(high, extent.deviceBlock() + extent.length());
                }
                for (Extent extent : persisted(cow)) {
                    low = Math.min(low, extent.deviceBlock());
                    high = Math.max(high, extent.deviceBlock() + extent.length());
                }
            } finally {
                lock.unlock();
            }
            boundsLow = low;
            boundsHigh = high;
            boundsSequence = seen;
        }
        return boundsLow < end && start < boundsHigh;
    }

    /** Bumps the validity cookie; caller holds {@link #lock}. */
    @SuppressWarnings("NonAtomicVolatileUpdate") // written under lock only; volatile for lock-free readers
    void changed() {
        sequence = sequence + 1;
    }

    private static List<Extent> persisted(ExtentMap fork) {
        List<Extent> result = new ArrayList<>();
        for (Extent extent : fork.extents()) {
            if (extent.state() != ExtentState.DELALLOC) {
                result.add(extent);
            }
        }
        return result;
    }

    @Override
    public String toString() {
        return "inode " + ino;
    }

    @Override
    public long ino() {
        return ino;
    }

    @Override
    public FileType type() {
        return type;
    }

    @Override
    public int mode() {
        return mode;
    }

    @Override
    public int gid() {
        return gid;
    }

    @Override
    public int linkCount() {
        return nlink;
    }

    @Override
    public void setLinkCount(int count) {
        nlink = count;
    }

    /** Sets the parent of a directory; a file's stays 0. */
    @Override
    public void setParent(long dirIno) {
        parent = isDirectory() ? dirIno : 0;
    }

    /** As {@link #statusChanged}. */
    @Override
    public void setCtime(Instant now) {
        statusChanged(now);
    }

    /** As {@link #modified}. */
    @Override
    public void setMtimeAndCtime(Instant now) {
        modified(now);
    }
}
