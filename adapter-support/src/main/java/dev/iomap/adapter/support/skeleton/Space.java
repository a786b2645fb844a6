package dev.iomap.adapter.support.skeleton;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.Journal;
import dev.iomap.api.NoSpaceException;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * One mount's bitmap allocator and journalled metadata images: the {@link BlockSpace} a model works
 * with. {@code onDisk} is the bitmap the next commit writes; {@code busy} is what may not be handed out
 * (the bitmap plus the blocks freed since the last commit, which its revokes and bitmap release only
 * once durable). Guarded by the mount's lock.
 */
final class Space implements BlockSpace {
    private final Layout layout;
    private final BlockDevice device;
    private final Journal journal;
    private final BitSet onDisk;
    private final BitSet busy;
    private final BitSet freedSinceCommit = new BitSet();
    private final TreeSet<Long> dirtyBitmapBlocks = new TreeSet<>();
    private final Map<Long, ByteBuffer> images = new HashMap<>();
    private final TreeSet<Long> dirtyImages = new TreeSet<>();
    private long cursor;

    Space(Layout layout, BlockDevice device, Journal journal, BitSet onDisk) {
        this.layout = layout;
        this.device = device;
        this.journal = journal;
        this.onDisk = onDisk;
        this.busy = (BitSet) onDisk.clone();
        this.cursor = layout.firstDataBlock();
    }

    /** Reads the bitmap blocks (home locations, current after a replay). */
    static BitSet readBitmap(BlockDevice device, Layout layout) throws IOException {
        ByteBuffer bytes = BlockIo.read(device, layout.bitmapStart(), (int) layout.bitmapBlocks());
        BitSet bits = BitSet.valueOf(bytes);
        bits.clear((int) layout.totalBlocks(), (int) (layout.bitmapBlocks() * layout.blockSize() * 8));
        return bits;
    }

    /** @return bitmap block {@code index} encoded from {@code bits} */
    static ByteBuffer encodeBitmapBlock(Layout layout, BitSet bits, long index) {
        int perBlock = layout.blockSize() * 8;
        byte[] bytes = bits.get((int) (index * perBlock), (int) ((index + 1) * perBlock)).toByteArray();
        ByteBuffer block = ByteBuffer.allocate(layout.blockSize());
        return block.put(bytes).clear();
    }

    @Override
    public int blockSize() {
        return layout.blockSize();
    }

    @Override
    public BlockRange allocate(long near, long count) throws NoSpaceException {
        long from = near >= layout.firstDataBlock() ? near + 1 : cursor;
        long start = free(from);
        if (start < 0) {
            start = free(layout.firstDataBlock());
        }
        if (start < 0) {
            throw new NoSpaceException("no free block among the " + layout.dataBlocks() + " data blocks"
                    + (freedSinceCommit.isEmpty() ? "" : " (" + freedSinceCommit.cardinality()
                    + " freed, reusable after the next commit)"));
        }
        long end = Math.min(busy.nextSetBit((int) start) < 0 ? layout.totalBlocks() : busy.nextSetBit((int) start),
                Math.min(layout.totalBlocks(), start + count));
        busy.set((int) start, (int) end);
        onDisk.set((int) start, (int) end);
        markBitmap(start, end);
        cursor = end;
        return new BlockRange(start, end - start);
    }

    private long free(long from) {
        long block = busy.nextClearBit((int) from);
        return block < layout.totalBlocks() ? block : -1;
    }

    @Override
    public void free(long block, long count) {
        for (long b = block; b < block + count; b++) {
            if (b < layout.firstDataBlock() || b >= layout.totalBlocks() || !onDisk.get((int) b)) {
                throw new IllegalStateException("double free or foreign free of block " + b);
            }
            images.remove(b);
            dirtyImages.remove(b);
        }
        onDisk.clear((int) block, (int) (block + count));
        freedSinceCommit.set((int) block, (int) (block + count));
        markBitmap(block, block + count);
    }

    private void markBitmap(long start, long end) {
        long perBlock = layout.blockSize() * 8L;
        for (long i = start / perBlock; i <= (end - 1) / perBlock; i++) {
            dirtyBitmapBlocks.add(i);
        }
    }

    @Override
    public ByteBuffer read(long block) throws IOException {
        ByteBuffer image = images.get(block);
        if (image == null) {
            image = journal.readBlock(block).order(ByteOrder.LITTLE_ENDIAN);
            images.put(block, image);
        }
        return image.duplicate().order(ByteOrder.LITTLE_ENDIAN).clear().asReadOnlyBuffer()
                .order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public ByteBuffer write(long block) throws IOException {
        read(block);
        dirtyImages.add(block);
        return images.get(block).duplicate().order(ByteOrder.LITTLE_ENDIAN).clear();
    }

    @Override
    public ByteBuffer create(long block) {
        ByteBuffer image = ByteBuffer.allocate(layout.blockSize()).order(ByteOrder.LITTLE_ENDIAN);
        images.put(block, image);
        dirtyImages.add(block);
        return image.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** @return whether the next commit has anything of the space's to write */
    boolean dirty() {
        return !dirtyBitmapBlocks.isEmpty() || !dirtyImages.isEmpty() || !freedSinceCommit.isEmpty();
    }

    /** @return whether blocks wait for a commit to become free */
    boolean hasFreedSinceCommit() {
        return !freedSinceCommit.isEmpty();
    }

    /** Logs dirty bitmap blocks and metadata images, and revokes every block freed since the last commit. */
    void logTo(Journal.Transaction tx) throws IOException {
        for (long index : dirtyBitmapBlocks) {
            tx.log(layout.bitmapStart() + index, encodeBitmapBlock(layout, onDisk, index));
        }
        for (long block : dirtyImages) {
            tx.log(block, images.get(block).duplicate().clear());
        }
        for (int b = freedSinceCommit.nextSetBit(0); b >= 0; b = freedSinceCommit.nextSetBit(b + 1)) {
            tx.revoke(b);
        }
    }

    /** The commit that {@link #logTo} filled is durable: freed blocks may be handed out again. */
    void committed() {
        busy.andNot(freedSinceCommit);
        busy.or(onDisk);
        freedSinceCommit.clear();
        dirtyBitmapBlocks.clear();
        dirtyImages.clear();
    }

    /** @return data blocks not free (freed ones waiting for a commit included) */
    long usedDataBlocks() {
        return busy.cardinality() - layout.firstDataBlock();
    }

    BlockDevice device() {
        return device;
    }
}
