package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.BitSet;

/**
 * One resource group in memory: its header (free and dinode counts) and its bitmap, two bits per
 * block: {@link #FREE}, {@link #USED} (data, indirect or chain), {@link #UNLINKED} (a dinode without
 * names, freed at evict or at the next mount) and {@link #DINODE}. Blocks held by a multi-block
 * reservation are free on the device but skipped by allocations for other inodes. Not thread-safe:
 * the mount's metadata lock guards it.
 */
final class ResourceGroup {
    /** Block state: free. */
    static final int FREE = 0;
    /** Block state: data, indirect or chain block. */
    static final int USED = 1;
    /** Block state: a dinode with no names left. */
    static final int UNLINKED = 2;
    /** Block state: a dinode. */
    static final int DINODE = 3;
    /** Bytes of a header's fields: u32 index, u32 bitmap blocks, u64 start, length, free and dinode counts. */
    static final int HEADER_FIELDS = 40;
    /** Bytes of a bitmap block's payload before its bits: u32 group index, u64 first block described. */
    static final int BITMAP_HEADER = 12;

    final int index;
    final long start;
    final long length;
    final int bitmapBlocks;
    private final byte[] bits;
    private final BitSet reserved = new BitSet();
    private final BitSet pending = new BitSet();
    private long free;
    private long dinodes;

    ResourceGroup(int index, long start, long length, int bitmapBlocks) {
        this.index = index;
        this.start = start;
        this.length = length;
        this.bitmapBlocks = bitmapBlocks;
        this.bits = new byte[(int) ((length + 3) / 4)];
        this.free = length;
    }

    /** @return a new group with its header and bitmap blocks used and everything else free */
    static ResourceGroup fresh(int index, long start, long length, int bitmapBlocks) {
        ResourceGroup rg = new ResourceGroup(index, start, length, bitmapBlocks);
        for (long b = start; b <= start + bitmapBlocks; b++) {
            rg.set(b, USED);
        }
        return rg;
    }

    /** @return the first block that data or dinodes may use */
    long dataStart() {
        return start + 1 + bitmapBlocks;
    }

    /** @return the state of {@code block} */
    int state(long block) {
        long i = block - start;
        return (bits[(int) (i >>> 2)] >>> ((i & 3) * 2)) & 3;
    }

    /**
     * Sets a block's state and keeps the counts.
     *
     * @param block a block of this group
     * @param state its new state
     */
    void set(long block, int state) {
        int old = state(block);
        long i = block - start;
        int shift = (int) ((i & 3) * 2);
        bits[(int) (i >>> 2)] = (byte) ((bits[(int) (i >>> 2)] & ~(3 << shift)) | (state << shift));
        free += (old == FREE ? -1 : 0) + (state == FREE ? 1 : 0);
        dinodes += (old >= UNLINKED ? -1 : 0) + (state >= UNLINKED ? 1 : 0);
        if (state != FREE) {
            reserved.clear((int) i);
        }
    }

    /** @return free blocks, reserved ones included */
    long free() {
        return free;
    }

    /** @return dinodes (unlinked included) */
    long dinodes() {
        return dinodes;
    }

    /** @return whether {@code block} is free, held by no reservation and not freed by the running transaction */
    boolean available(long block) {
        int i = (int) (block - start);
        return state(block) == FREE && !reserved.get(i) && !pending.get(i);
    }

    /** @return whether {@code block} is free and not freed by the running transaction (reserved or not) */
    boolean usable(long block) {
        return state(block) == FREE && !pending.get((int) (block - start));
    }

    /** Frees {@code block} in the bitmap and keeps it from reuse until {@link #releasePending()}. */
    void freePending(long block) {
        set(block, FREE);
        pending.set((int) (block - start));
    }

    /** @return whether blocks freed by the running transaction wait here */
    boolean hasPending() {
        return !pending.isEmpty();
    }

    /** @return the blocks freed by the running transaction */
    long[] pendingBlocks() {
        return pending.stream().mapToLong(i -> start + i).toArray();
    }

    /** The running transaction committed: its freed blocks may be reused. */
    void releasePending() {
        pending.clear();
    }

    /** Marks {@code [from, to)} as held by a reservation. */
    void reserve(long from, long to) {
        reserved.set((int) (from - start), (int) (to - start));
    }

    /** Releases the reservation of {@code [from, to)}. */
    void unreserve(long from, long to) {
        reserved.clear((int) (from - start), (int) (to - start));
    }

    /**
     * Finds the first run of available blocks at or after {@code from}.
     *
     * @param from where to start looking
     * @param want the most blocks wanted
     * @param takeReserved whether blocks held by reservations count as available (the owners' next
     *     allocation then finds them used and moves on, as {@code gfs2_alloc_blocks} searches again
     *     ignoring reservations when it finds nothing else)
     * @return {@code [start, end)} of the run packed as {@code start} and length, or null if none
     */
    long[] findRun(long from, long want, boolean takeReserved) {
        long end = start + length;
        for (long b = Math.max(from, dataStart()); b < end; b++) {
            if (takeReserved ? usable(b) : available(b)) {
                long e = b + 1;
                while (e < end && e - b < want && (takeReserved ? usable(e) : available(e))) {
                    e++;
                }
                return new long[] {b, e - b};
            }
        }
        return null;
    }

    /** @return the header block image */
    ByteBuffer encodeHeader(int blockSize) {
        ByteBuffer p = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(index).putInt(bitmapBlocks).putLong(start).putLong(length).putLong(free).putLong(dinodes).flip();
        return Gfs2Layout.image(new MetadataBlock(Gfs2Layout.RGRP_TYPE, start, 0, p), blockSize);
    }

    /** @return the image of bitmap block {@code i} */
    ByteBuffer encodeBitmap(int i, int blockSize, int blocksPerBitmap) {
        int from = i * (blocksPerBitmap / 4);
        int bytes = Math.min(blocksPerBitmap / 4, bits.length - from);
        ByteBuffer p = ByteBuffer.allocate(BITMAP_HEADER + bytes).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(index).putLong(start + (long) i * blocksPerBitmap).put(bits, from, bytes).flip();
        return Gfs2Layout.image(new MetadataBlock(Gfs2Layout.BITMAP_TYPE, start + 1 + i, 0, p), blockSize);
    }

    /** @return the bitmap block that describes {@code block} */
    long bitmapBlockOf(long block, int blocksPerBitmap) {
        return start + 1 + (block - start) / blocksPerBitmap;
    }

    /**
     * Loads a group from its verified header and bitmap blocks.
     *
     * @param header the header block
     * @param bitmaps the bitmap blocks in order
     * @param blocksPerBitmap blocks one bitmap block describes
     * @param index the expected group index
     * @param start the expected first block
     * @param length the expected length
     * @return the group
     * @throws CorruptFileSystemException if a field disagrees with the layout or the counts with the bits
     */
    static ResourceGroup decode(MetadataBlock header, MetadataBlock[] bitmaps, int blocksPerBitmap, int index,
            long start, long length) throws CorruptFileSystemException {
        ByteBuffer h = header.payload().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (h.remaining() < HEADER_FIELDS) {
            throw new CorruptFileSystemException("resource group header at block " + start + ": payload of "
                    + h.remaining() + " bytes, shorter than its " + HEADER_FIELDS + " bytes of fields");
        }
        int storedIndex = h.getInt();
        int bitmapBlocks = h.getInt();
        long storedStart = h.getLong();
        long storedLength = h.getLong();
        long storedFree = h.getLong();
        long storedDinodes = h.getLong();
        if (storedIndex != index || storedStart != start || storedLength != length || bitmapBlocks != bitmaps.length) {
            throw new CorruptFileSystemException("resource group header at block " + start + " says group "
                    + storedIndex + " at " + storedStart + "+" + storedLength + " with " + bitmapBlocks
                    + " bitmap blocks; the layout says group " + index + " at " + start + "+" + length);
        }
        ResourceGroup rg = new ResourceGroup(index, start, length, bitmapBlocks);
        for (int i = 0; i < bitmaps.length; i++) {
            ByteBuffer p = bitmaps[i].payload().duplicate().order(ByteOrder.LITTLE_ENDIAN);
            if (p.remaining() < BITMAP_HEADER || p.getInt() != index || p.getLong() != start + (long) i * blocksPerBitmap) {
                throw new CorruptFileSystemException("bitmap block " + bitmaps[i].blockNo() + " belongs elsewhere");
            }
            int from = i * (blocksPerBitmap / 4);
            int bytes = Math.min(blocksPerBitmap / 4, rg.bits.length - from);
            if (p.remaining() != bytes) {
                throw new CorruptFileSystemException("bitmap block " + bitmaps[i].blockNo() + " holds "
                        + p.remaining() + " bytes of bits, not " + bytes);
            }
            p.get(rg.bits, from, bytes);
        }
        rg.free = 0;
        rg.dinodes = 0;
        for (long b = start; b < start + length; b++) {
            int s = rg.state(b);
            rg.free += s == FREE ? 1 : 0;
            rg.dinodes += s >= UNLINKED ? 1 : 0;
        }
        if (rg.free != storedFree || rg.dinodes != storedDinodes) {
            throw new CorruptFileSystemException("resource group " + index + " header counts " + storedFree
                    + " free and " + storedDinodes + " dinodes; its bitmap has " + rg.free + " and " + rg.dinodes);
        }
        return rg;
    }
}
