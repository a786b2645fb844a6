package dev.iomap.core.mm;

import dev.iomap.api.StateLock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Per-block state of one folio with more than one block: the kernel's {@code iomap_folio_state}.
 *
 * <p>Two bitmaps in one allocation, uptodate bits first and dirty bits second, reached only through
 * the accessors below, which take byte offsets inside the folio so that no caller ever sees the
 * layout. Every accessor takes the state lock; {@link #setRangeUptodateAndDirty} takes it once for
 * both updates.
 *
 * <p>Rounding: setting a range marks every block the range touches; {@link #clearRangeDirty} clears
 * only the blocks the range covers completely, so the partly cleared edge blocks stay dirty.
 */
public final class FolioState {
    private final int blockShift;
    private final int nrBlocks;
    private final long[] bits;
    private final ReentrantLock stateLock = new ReentrantLock();

    /**
     * Creates the state of a folio, inheriting the folio-wide flags: an uptodate folio has every
     * block uptodate, a dirty folio every block dirty (the kernel's {@code ifs_alloc}).
     *
     * @param folioSize bytes in the folio
     * @param blockShift log2 of the block size
     * @param uptodate whether the folio is already uptodate
     * @param dirty whether the folio is already dirty
     */
    FolioState(int folioSize, int blockShift, boolean uptodate, boolean dirty) {
        this.blockShift = blockShift;
        this.nrBlocks = folioSize >>> blockShift;
        this.bits = new long[(2 * nrBlocks + 63) >>> 6];
        if (uptodate) {
            setBits(0, nrBlocks);
        }
        if (dirty) {
            setBits(nrBlocks, nrBlocks);
        }
    }

    /** @return number of blocks in the folio (the kernel's {@code i_blocks_per_folio}) */
    public int blockCount() {
        return nrBlocks;
    }

    /**
     * Marks the blocks touched by {@code [offset, offset + length)} uptodate (the kernel's
     * {@code ifs_set_range_uptodate}).
     *
     * @param offset byte offset inside the folio
     * @param length bytes
     * @return whether every block of the folio is now uptodate
     */
    public boolean setRangeUptodate(int offset, int length) {
        stateLock.lock();
        try {
            setUptodateLocked(offset, length);
            return isFullyUptodateLocked();
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * Marks the blocks touched by {@code [offset, offset + length)} dirty (the kernel's
     * {@code ifs_set_range_dirty}).
     *
     * @param offset byte offset inside the folio
     * @param length bytes; 0 marks nothing
     */
    public void setRangeDirty(int offset, int length) {
        if (length == 0) {
            return;
        }
        stateLock.lock();
        try {
            setBits(nrBlocks + firstBlock(offset), blocksTouched(offset, length));
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * Marks {@code [offset, offset + uptodateLength)} uptodate and {@code [offset, offset +
     * dirtyLength)} dirty under one acquisition of the state lock: the
     * {@code ifs_set_range_dirty_uptodate} that the 2024 series (iomap-bs-lt-folio-fixes, patch 6)
     * proposed; mainline still takes the lock twice.
     *
     * @param offset byte offset inside the folio
     * @param uptodateLength bytes now uptodate
     * @param dirtyLength bytes now dirty, at most {@code uptodateLength}
     * @return whether every block of the folio is now uptodate
     */
    public boolean setRangeUptodateAndDirty(int offset, int uptodateLength, int dirtyLength) {
        stateLock.lock();
        try {
            setUptodateLocked(offset, uptodateLength);
            if (dirtyLength > 0) {
                setBits(nrBlocks + firstBlock(offset), blocksTouched(offset, dirtyLength));
            }
            return isFullyUptodateLocked();
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * Marks the range uptodate and dirty the way {@code lockMode} says, as the kernel's
     * {@code __iomap_write_end} does: one lock cycle for {@link StateLock#COMBINED}
     * ({@code ifs_set_range_dirty_uptodate}, see {@link #setRangeUptodateAndDirty}), two for
     * {@link StateLock#SEPARATE} ({@code iomap_set_range_uptodate} then {@code iomap_set_range_dirty}).
     *
     * @param lockMode how many lock cycles to take
     * @param offset byte offset inside the folio
     * @param uptodateLength bytes now uptodate
     * @param dirtyLength bytes now dirty
     * @return whether every block of the folio is now uptodate
     */
    public boolean markWritten(StateLock lockMode, int offset, int uptodateLength, int dirtyLength) {
        if (lockMode == StateLock.COMBINED) {
            return setRangeUptodateAndDirty(offset, uptodateLength, dirtyLength);
        }
        boolean fullyUptodate = setRangeUptodate(offset, uptodateLength);
        setRangeDirty(offset, dirtyLength);
        return fullyUptodate;
    }

    /**
     * Clears dirty on the blocks that {@code [offset, offset + length)} covers completely (the
     * kernel's {@code ifs_clear_range_dirty} with the rounding of the 2024 series' patch 1; mainline
     * rounds outwards).
     *
     * @param offset byte offset inside the folio
     * @param length bytes
     */
    public void clearRangeDirty(int offset, int length) {
        int first = (offset + (1 << blockShift) - 1) >>> blockShift;
        int end = (offset + length) >>> blockShift;
        if (end <= first) {
            return;
        }
        stateLock.lock();
        try {
            clearBits(nrBlocks + first, end - first);
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * Clears every dirty bit (the kernel's {@code iomap_clear_range_dirty(folio, 0, folio_size(folio))}
     * at the end of {@code iomap_writeback_folio}).
     */
    public void clearAllDirty() {
        stateLock.lock();
        try {
            clearBits(nrBlocks, nrBlocks);
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * The kernel's {@code ifs_block_is_uptodate} (gone from the newest kernels, which ask
     * {@code ifs_next_nonuptodate_block} instead).
     *
     * @param offset byte offset inside the folio
     * @return whether the block holding {@code offset} is uptodate
     */
    public boolean isBlockUptodate(int offset) {
        stateLock.lock();
        try {
            return testBit(firstBlock(offset));
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * The kernel's {@code ifs_block_is_dirty} (gone from the newest kernels, which ask
     * {@code ifs_next_dirty_block} instead).
     *
     * @param offset byte offset inside the folio
     * @return whether the block holding {@code offset} is dirty
     */
    public boolean isBlockDirty(int offset) {
        stateLock.lock();
        try {
            return testBit(nrBlocks + firstBlock(offset));
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * The per-block part of the kernel's {@code iomap_is_partially_uptodate}.
     *
     * @param offset byte offset inside the folio
     * @param length bytes, at least 1
     * @return whether every block touched by the range is uptodate
     */
    public boolean isRangeUptodate(int offset, int length) {
        stateLock.lock();
        try {
            int first = firstBlock(offset);
            int end = first + blocksTouched(offset, length);
            return nextBit(first, end, false) == end;
        } finally {
            stateLock.unlock();
        }
    }

    /** @return whether every block is uptodate (the kernel's {@code ifs_is_fully_uptodate}) */
    public boolean isFullyUptodate() {
        stateLock.lock();
        try {
            return isFullyUptodateLocked();
        } finally {
            stateLock.unlock();
        }
    }

    /** @return whether any block is dirty */
    public boolean isAnyDirty() {
        return nextDirtyBlock(0, nrBlocks << blockShift) >= 0;
    }

    /**
     * The next dirty block at or after {@code from}, before {@code limit} (the kernel's
     * {@code ifs_next_dirty_block}).
     *
     * @param from byte offset inside the folio, block aligned
     * @param limit byte offset to stop at
     * @return the byte offset of that block, or -1 if there is none
     */
    public int nextDirtyBlock(int from, int limit) {
        return nextBlock(nrBlocks, from, limit, true);
    }

    /**
     * The next clean block at or after {@code from}, before {@code limit} (the kernel's
     * {@code ifs_next_clean_block}).
     *
     * @param from byte offset inside the folio, block aligned
     * @param limit byte offset to stop at
     * @return the byte offset of that block, or {@code limit} rounded up to a block if there is none
     */
    public int nextCleanBlock(int from, int limit) {
        int found = nextBlock(nrBlocks, from, limit, false);
        return found >= 0 ? found : roundUpToBlock(limit);
    }

    /**
     * The next uptodate block at or after {@code from}, before {@code limit} (the kernel's
     * {@code ifs_next_uptodate_block}).
     *
     * @param from byte offset inside the folio, block aligned
     * @param limit byte offset to stop at
     * @return the byte offset of that block, or -1 if there is none
     */
    public int nextUptodateBlock(int from, int limit) {
        return nextBlock(0, from, limit, true);
    }

    /**
     * The next block that is not uptodate at or after {@code from}, before {@code limit} (the
     * kernel's {@code ifs_next_nonuptodate_block}).
     *
     * @param from byte offset inside the folio, block aligned
     * @param limit byte offset to stop at
     * @return the byte offset of that block, or {@code limit} rounded up to a block if there is none
     */
    public int nextNotUptodateBlock(int from, int limit) {
        int found = nextBlock(0, from, limit, false);
        return found >= 0 ? found : roundUpToBlock(limit);
    }

    private int nextBlock(int base, int from, int limit, boolean set) {
        int first = from >>> blockShift;
        int end = Math.min(nrBlocks, blocksTouched(0, limit));
        if (first >= end) {
            return -1;
        }
        stateLock.lock();
        try {
            int bit = nextBit(base + first, base + end, set);
            return bit == base + end ? -1 : (bit - base) << blockShift;
        } finally {
            stateLock.unlock();
        }
    }

    private int roundUpToBlock(int offset) {
        return blocksTouched(0, offset) << blockShift;
    }

    private void setUptodateLocked(int offset, int length) {
        if (length > 0) {
            setBits(firstBlock(offset), blocksTouched(offset, length));
        }
    }

    private boolean isFullyUptodateLocked() {
        return nextBit(0, nrBlocks, false) == nrBlocks;
    }

    private int firstBlock(int offset) {
        return offset >>> blockShift;
    }

    private int blocksTouched(int offset, int length) {
        if (length <= 0) {
            return 0;
        }
        int last = (offset + length - 1) >>> blockShift;
        return last - firstBlock(offset) + 1;
    }

    private boolean testBit(int bit) {
        return (bits[bit >>> 6] & (1L << bit)) != 0;
    }

    private void setBits(int start, int count) {
        int end = start + count;
        for (int word = start >>> 6; word <= (end - 1) >>> 6 && count > 0; word++) {
            bits[word] |= wordMask(word, start, end);
        }
    }

    private void clearBits(int start, int count) {
        int end = start + count;
        for (int word = start >>> 6; word <= (end - 1) >>> 6 && count > 0; word++) {
            bits[word] &= ~wordMask(word, start, end);
        }
    }

    /** The bits of {@code word} that lie in {@code [start, end)}. */
    private static long wordMask(int word, int start, int end) {
        int wordStart = word << 6;
        long low = start > wordStart ? -1L << (start - wordStart) : -1L;
        long high = end < wordStart + 64 ? -1L >>> (wordStart + 64 - end) : -1L;
        return low & high;
    }

    /** The first bit in {@code [start, end)} equal to {@code set}, or {@code end}. */
    private int nextBit(int start, int end, boolean set) {
        if (start >= end) {
            return end;
        }
        for (int word = start >>> 6; word <= (end - 1) >>> 6; word++) {
            long candidates = (set ? bits[word] : ~bits[word]) & wordMask(word, start, end);
            if (candidates != 0) {
                return (word << 6) + Long.numberOfTrailingZeros(candidates);
            }
        }
        return end;
    }
}
