package dev.iomap.core.mm;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@code 2^order} pages of one file, naturally aligned in the file, held in memory from the cache's
 * {@link FolioMemoryPool}: the kernel's {@code struct folio}.
 *
 * <p>Lifetime: the cache holds one reference while the folio is in it; a reader that copies without
 * the folio lock takes another ({@link #tryGet}/{@link #put}). The memory goes back to the pool with
 * the last reference, never while anybody may still read it; a folio under writeback or locked is
 * never removed, so device I/O into or out of it needs no reference of its own.
 *
 * <p>Flags: {@code UPTODATE} (every byte is valid), {@code DIRTY} (some block needs writeback),
 * {@code WRITEBACK} (a device write is in flight) and {@code READAHEAD} (the marker whose reading
 * starts the next readahead window, see {@code Readahead}). Without a {@link FolioState} the folio-wide flags
 * stand for every block; a folio with more than one block may carry a state that tracks each block.
 * The folio lock, held while data or state changes, is not a flag (the kernel's {@code PG_locked}) but
 * a {@link ReentrantLock} of its own.
 *
 * <p>Thread-safety: data and {@link #state()} change only with the folio lock held; the flags are
 * atomic; writeback ends on the I/O completion thread without the lock.
 */
public final class Folio {
    private static final int UPTODATE = 1;
    private static final int DIRTY = 2;
    private static final int WRITEBACK = 4;
    private static final int READAHEAD = 8;
    private static final int DROPBEHIND = 16;

    private static final VarHandle REFS;
    private static final VarHandle FLAGS;
    private static final VarHandle WRITEBACK_PENDING;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            REFS = lookup.findVarHandle(Folio.class, "refs", int.class);
            FLAGS = lookup.findVarHandle(Folio.class, "flags", int.class);
            WRITEBACK_PENDING = lookup.findVarHandle(Folio.class, "writebackPending", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final PageCache cache;
    private final long index;
    private final int order;
    private final int size;
    private final FolioMemoryPool.FolioMemory block;
    private final MemorySegment memory;
    /**
     * What bulk copies go through, made once so the hot paths copy without allocating: the memory
     * pool's view holding this folio (shared by every folio in it), or else a view of this folio's
     * own; the folio starts at {@link #copyBase} in it. Shared, so only its absolute operations (and
     * {@code slice(int, int)}) are ever used, never its position or limit. (A folio keeps no buffer
     * of its own besides: each was one more object per cached folio for the collector to copy.)
     */
    private final ByteBuffer copyView;
    private final int copyBase;
    /**
     * References: one for the cache while the folio is in it, one per lock-free reader copying. This
     * and the next two are fields changed through {@link VarHandle}s rather than atomic objects of
     * their own: a cache-hit read tests the flags and takes a reference, and each separate object
     * was one more cache miss per read of a folio not touched lately (as the kernel keeps
     * {@code flags} and {@code _refcount} in {@code struct folio} itself).
     */
    @SuppressWarnings("unused") // through REFS
    private volatile int refs = 1;
    /** UPTODATE, DIRTY, WRITEBACK, READAHEAD, DROPBEHIND; through {@link #FLAGS}. */
    @SuppressWarnings("unused") // through FLAGS
    private volatile int flags;
    /** Bytes of writeback in flight plus the bias; through {@link #WRITEBACK_PENDING}. */
    @SuppressWarnings("unused") // through WRITEBACK_PENDING
    private volatile long writebackPending;
    private final ReentrantLock lock = new ReentrantLock();
    /**
     * Guards every change of the dirty and writeback flags together with the cache's tag for it (the
     * kernel changes both under the mapping's {@code xa_lock}), so no thread sees a flag and a tag
     * that disagree; writeback waiters wait on it.
     */
    private final Object flagLock = new Object();
    private FolioState state;
    private volatile long dirtiedAtNanos;
    private volatile long lastAccess;
    private volatile boolean removed;
    /** The neighbours in the cache's {@link FolioLru}; guarded by its lock, as are the next two. */
    Folio lruPrev;
    Folio lruNext;
    /** Whether the folio is on the {@link FolioLru} now (not when reclaim has taken it off). */
    boolean lruListed;
    /** {@link #lastAccess} when the folio was last put on the {@link FolioLru}. */
    long lruStamp;

    /**
     * @param poolView the memory pool's view holding {@code block} ({@link FolioMemoryPool#copyView}),
     *     or null to copy through a view of the folio's own
     */
    Folio(PageCache cache, long index, int order, FolioMemoryPool.FolioMemory block, ByteBuffer poolView) {
        this.cache = cache;
        this.index = index;
        this.order = order;
        this.block = block;
        this.memory = block.segment();
        this.size = (int) memory.byteSize();
        this.copyView = poolView != null ? poolView : memory.asByteBuffer();
        this.copyBase = poolView != null ? FolioMemoryPool.copyBase(block) : 0;
    }

    /**
     * Takes a reference unless the folio's memory is already gone (the kernel's
     * {@code folio_try_get}): a reader that copies out of a folio without its lock holds one, so the
     * memory cannot go back to the pool, and be reused by another folio, under the copy.
     *
     * @return whether a reference was taken; false if the folio was removed and released
     */
    public boolean tryGet() {
        int current;
        do {
            current = refs;
            if (current == 0) {
                return false;
            }
        } while (!REFS.compareAndSet(this, current, current + 1));
        return true;
    }

    /**
     * Drops a reference (the kernel's {@code folio_put}); the last one returns the memory to the
     * pool. The cache's own reference is dropped when the folio is removed from it.
     */
    public void put() {
        int left = (int) REFS.getAndAdd(this, -1) - 1;
        if (left == 0) {
            cache.freeMemory(block);
        } else if (left < 0) {
            throw new IllegalStateException("folio reference dropped twice: " + this);
        }
    }

    /** @return the cache holding this folio */
    public PageCache cache() {
        return cache;
    }

    /**
     * Records an access, for least-recently-used reclaim (the kernel's {@code folio_mark_accessed}):
     * stamps the folio with the cache's {@linkplain PageCache#accessClock() access clock}, the count of
     * folio allocations so far, and writes the stamp only when it changed, so repeated hits between two
     * allocations read one shared line and write nothing.
     */
    public void touch() {
        long now = cache.accessClock();
        if (lastAccess != now) {
            lastAccess = now;
        }
    }

    /**
     * @return when the folio was last accessed, on the cache's {@linkplain PageCache#accessClock()
     *     access clock}; when it entered the cache if not since
     */
    long lastAccess() {
        return lastAccess;
    }

    /** @return index of the first page, a multiple of {@code 2^order} */
    public long index() {
        return index;
    }

    /** @return log2 of the number of pages */
    public int order() {
        return order;
    }

    /** @return bytes in the folio (the kernel's {@code folio_size}) */
    public int size() {
        return size;
    }

    /** @return file offset of the first byte (the kernel's {@code folio_pos}) */
    public long pos() {
        return index << cache.pageShift();
    }

    /**
     * @return file offset just past the last byte (the kernel's {@code folio_next_pos}; older code
     *     writes {@code folio_pos + folio_size})
     */
    public long end() {
        return pos() + size;
    }

    /** @return the folio's memory; change it only with the folio locked */
    public MemorySegment memory() {
        return memory;
    }

    /**
     * A view of part of the folio as a direct buffer, for device I/O.
     *
     * @param offset byte offset inside the folio
     * @param length bytes
     * @return a buffer positioned at 0 with {@code length} bytes remaining
     */
    public ByteBuffer buffer(int offset, int length) {
        return memory.asSlice(offset, length).asByteBuffer();
    }

    /**
     * The buffer for absolute bulk copies into and out of this folio, which may be shared with other
     * folios (the memory pool's view): byte {@code offset} of the folio is at index
     * {@link #copyIndex}{@code (offset)} in it, and a copy must stay within the folio, which the
     * buffer's own bounds do not check. Never use its position, limit or mark.
     *
     * @return the buffer
     */
    public ByteBuffer copyView() {
        return copyView;
    }

    /**
     * @param offset byte offset inside the folio
     * @return that byte's index in {@link #copyView()}
     */
    public int copyIndex(int offset) {
        return copyBase + offset;
    }

    /**
     * A read-only view of part of the folio, for writeback: two new objects (a slice of the copy
     * view, made read-only).
     *
     * @param offset byte offset inside the folio
     * @param length bytes
     * @return a read-only buffer positioned at 0 with {@code length} bytes remaining
     */
    public ByteBuffer readOnlyBuffer(int offset, int length) {
        return copyView.slice(copyBase + offset, length).asReadOnlyBuffer();
    }

    /** @return the number of blocks in the folio (the kernel's {@code i_blocks_per_folio}) */
    public int blockCount() {
        return size >>> cache.blockShift();
    }

    /** Takes the folio lock, waiting for it (the kernel's {@code folio_lock}). */
    public void lock() {
        lock.lock();
    }

    /**
     * Takes the folio lock if it is free (the kernel's {@code folio_trylock}).
     *
     * @return whether the lock was free and is now held by the caller
     */
    public boolean tryLock() {
        return lock.tryLock();
    }

    /** Releases the folio lock; the caller must hold it (the kernel's {@code folio_unlock}). */
    public void unlock() {
        lock.unlock();
    }

    /** @return the per-block state, or null if the folio has none */
    public FolioState state() {
        return state;
    }

    /**
     * The per-block state, created if missing for a folio of more than one block. A new state
     * inherits the folio-wide uptodate and dirty flags. Caller holds the folio lock. The kernel's
     * {@code ifs_alloc} (was {@code iomap_page_create}).
     *
     * @return the state, or null for a one-block folio
     */
    public FolioState stateForUpdate() {
        if (state != null || blockCount() == 1) {
            return state;
        }
        state = new FolioState(size, cache.blockShift(), isUptodate(), isDirty());
        cache.stats().folioStateAllocated();
        return state;
    }

    /**
     * Drops the per-block state (full invalidation). Caller holds the folio lock. The kernel's
     * {@code ifs_free} (was {@code iomap_page_release}).
     */
    public void dropState() {
        state = null;
    }

    /** @return whether every byte of the folio is valid (the kernel's {@code folio_test_uptodate}) */
    public boolean isUptodate() {
        return (flags & UPTODATE) != 0;
    }

    /** @return whether the folio has blocks waiting for writeback (the kernel's {@code folio_test_dirty}) */
    public boolean isDirty() {
        return (flags & DIRTY) != 0;
    }

    /**
     * @return whether a device write of this folio is in flight (the kernel's
     *     {@code folio_test_writeback})
     */
    public boolean isWriteback() {
        return (flags & WRITEBACK) != 0;
    }

    /**
     * Whether the bytes {@code [offset, offset + length)} hold valid data: the kernel's
     * {@code iomap_is_partially_uptodate}, which answers false for a folio without state, where this
     * answers true if the folio is uptodate.
     *
     * @param offset byte offset inside the folio
     * @param length bytes, at least 1
     * @return true if the folio, or every block the range touches, is uptodate
     */
    public boolean isRangeUptodate(int offset, int length) {
        if (isUptodate()) {
            return true;
        }
        FolioState current = state;
        return current != null && current.isRangeUptodate(offset, length);
    }

    /**
     * Marks the folio as the readahead marker of its window: a reader reaching it starts the next
     * window (the kernel's {@code folio_set_readahead}, the {@code PG_readahead} flag).
     */
    public void markReadahead() {
        FLAGS.getAndBitwiseOr(this, READAHEAD);
    }

    /**
     * Clears the readahead marker (the kernel's {@code folio_test_clear_readahead}).
     *
     * @return whether the folio carried it: exactly one caller sees true per marking
     */
    public boolean testClearReadahead() {
        if ((flags & READAHEAD) == 0) {
            return false;
        }
        return ((int) FLAGS.getAndBitwiseAnd(this, ~READAHEAD) & READAHEAD) != 0;
    }

    /** @return whether the folio carries the readahead marker (the kernel's {@code folio_test_readahead}) */
    boolean isReadahead() {
        return (flags & READAHEAD) != 0;
    }

    /**
     * Marks the folio to leave the cache once it is clean and no longer needed: after the read that
     * brought it in copied from it, or once its writeback ends (the kernel's
     * {@code folio_set_dropbehind}, which an {@code RWF_DONTCACHE} read or write sets on the folios it
     * creates).
     */
    public void setDropBehind() {
        FLAGS.getAndBitwiseOr(this, DROPBEHIND);
    }

    /** @return whether the folio is to leave the cache once clean (the kernel's {@code folio_test_dropbehind}) */
    public boolean isDropBehind() {
        return (flags & DROPBEHIND) != 0;
    }

    /**
     * Clears the drop-behind mark (the kernel's {@code folio_test_clear_dropbehind}): a cached access
     * keeps the folio, and exactly one caller gets to drop it.
     *
     * @return whether the folio carried it
     */
    public boolean testClearDropBehind() {
        if ((flags & DROPBEHIND) == 0) {
            return false;
        }
        return ((int) FLAGS.getAndBitwiseAnd(this, ~DROPBEHIND) & DROPBEHIND) != 0;
    }

    /** @return whether the calling thread holds the folio lock */
    boolean isLockedByCurrentThread() {
        return lock.isHeldByCurrentThread();
    }

    /** Marks the whole folio uptodate (the kernel's {@code folio_mark_uptodate}). */
    public void markUptodate() {
        FLAGS.getAndBitwiseOr(this, UPTODATE);
    }

    /**
     * Sets the folio dirty flag and tags it in its cache (the kernel's {@code filemap_dirty_folio}).
     *
     * @return whether the folio was clean before
     */
    public boolean markDirty() {
        if (isDirty()) {
            return false;
        }
        synchronized (flagLock) {
            int old = (int) FLAGS.getAndBitwiseOr(this, DIRTY);
            if ((old & DIRTY) != 0) {
                return false;
            }
            dirtiedAtNanos = System.nanoTime();
            cache.tagDirty(this);
            return true;
        }
    }

    /**
     * Clears the dirty flag before writeback (the kernel's {@code folio_clear_dirty_for_io}).
     *
     * @return whether the folio was dirty
     */
    public boolean clearDirtyForIo() {
        synchronized (flagLock) {
            int old = (int) FLAGS.getAndBitwiseAnd(this, ~DIRTY);
            if ((old & DIRTY) == 0) {
                return false;
            }
            cache.untagDirty(this);
            return true;
        }
    }

    /** @return when the folio last went from clean to dirty, in {@link System#nanoTime()} units */
    public long dirtiedAtNanos() {
        return dirtiedAtNanos;
    }

    /**
     * Moves a dirty folio to writeback in one step: the writeback flag and tag are set before the
     * dirty flag and tag are cleared, under one monitor, so that no reader ever sees the folio (or its
     * cache) neither dirty nor under writeback while its data is on the way to the device. It also holds
     * a bias of one pending byte so that ioends completing while the folio is still being mapped cannot
     * end its writeback early (the bias {@code iomap_writeback_folio} takes on the state's
     * {@code write_bytes_pending}). Caller holds the lock; a clean folio only starts writeback.
     *
     * <p>The kernel's {@code folio_clear_dirty_for_io} followed by {@code folio_start_writeback}: there
     * the dirty tag outlives the dirty flag until {@code __folio_start_writeback} clears it under the
     * same {@code xa_lock} that sets the writeback tag, and {@code filemap_range_has_writeback} also
     * counts a locked folio. Done in two steps, zero range's batch of dirty or in-flight folios could
     * miss a folio between them, find a hole where the flusher was about to allocate, and lose the
     * zeroes to the flusher's late write.
     */
    public void clearDirtyAndStartWriteback() {
        synchronized (flagLock) {
            WRITEBACK_PENDING.setVolatile(this, 1L);
            int old;
            do {
                old = flags;
            } while (!FLAGS.compareAndSet(this, old, (old | WRITEBACK) & ~DIRTY));
            cache.tagWriteback(this);
            if ((old & DIRTY) != 0) {
                cache.untagDirty(this);
            }
        }
    }

    /**
     * Adds bytes about to be written by an ioend.
     *
     * @param bytes bytes added to an ioend
     */
    public void addWritebackPending(int bytes) {
        WRITEBACK_PENDING.getAndAdd(this, (long) bytes);
    }

    /**
     * Ends writeback of {@code bytes}; the last one clears the flag and the tag together and wakes
     * waiters. A thread holding the folio lock may start writeback again as soon as the flag is clear;
     * since the flag and tag change under one monitor, its tag is never lost to this one's removal.
     *
     * <p>The kernel's {@code iomap_finish_folio_write}; the last byte does what its
     * {@code folio_end_writeback} does, {@code folio_end_dropbehind} included: a folio marked
     * {@link #setDropBehind drop-behind} leaves the cache here if it is clean and its lock free.
     *
     * @param bytes bytes whose write finished (1 for the bias)
     */
    public void finishWriteback(long bytes) {
        if ((long) WRITEBACK_PENDING.getAndAdd(this, -bytes) - bytes != 0) {
            return;
        }
        synchronized (flagLock) {
            FLAGS.getAndBitwiseAnd(this, ~WRITEBACK);
            cache.untagWriteback(this);
            flagLock.notifyAll();
        }
        if (isDropBehind() && !isLockedByCurrentThread()) {
            // a thread holding the lock (writeback that submitted while mapping) drops it when done
            cache.endDropBehind(this);
        }
    }

    /** Waits until no device write of this folio is in flight (the kernel's {@code folio_wait_writeback}). */
    public void waitWriteback() {
        if (!isWriteback()) {
            return;
        }
        boolean interrupted = false;
        synchronized (flagLock) {
            while (isWriteback()) {
                try {
                    flagLock.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return whether the folio was removed from its cache */
    public boolean isRemoved() {
        return removed;
    }

    void markRemoved() {
        removed = true;
    }

    @Override
    public String toString() {
        return "Folio[index=" + index + ", order=" + order + ", flags=" + flags + "]";
    }
}
