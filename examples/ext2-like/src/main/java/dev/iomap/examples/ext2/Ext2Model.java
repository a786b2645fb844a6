package dev.iomap.examples.ext2;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.skeleton.BlockMapModel;
import dev.iomap.adapter.support.skeleton.BlockSpace;
import dev.iomap.adapter.support.skeleton.FreeReason;
import dev.iomap.adapter.support.skeleton.MetaReader;
import dev.iomap.adapter.support.skeleton.Run;
import dev.iomap.adapter.support.skeleton.SkeletonInode;
import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.util.function.LongConsumer;

/**
 * ext2's block map: an inode holds 12 direct block pointers (slots 0-11) and one single-indirect pointer
 * (slot 12); the indirect block is an array of little-endian 32-bit block numbers (0: a hole). A file has
 * at most {@code 12 + blockSize / 4} blocks. Blocks come from the skeleton's bitmap, placed after the
 * file's previous block when it is free.
 *
 * <p>Not final: the tests plant bugs in subclasses, one overridden step each.
 */
public class Ext2Model implements BlockMapModel {
    /** Direct pointers per inode. */
    public static final int DIRECT = 12;
    /** The slot of the single-indirect pointer. */
    public static final int INDIRECT = 12;

    /** @return 13: 12 direct pointers and the indirect one */
    @Override
    public int inodeSlots() {
        return DIRECT + 1;
    }

    /** @return 12 plus the pointers of one indirect block */
    @Override
    public long maxFileBlocks(int blockSize) {
        return DIRECT + blockSize / 4L;
    }

    /**
     * @param meta the metadata blocks
     * @param inode the file
     * @param fileBlock a file block below {@link #maxFileBlocks}
     * @return its device block, or 0 for a hole
     * @throws IOException if the indirect block cannot be read
     */
    protected long pointer(MetaReader meta, SkeletonInode inode, long fileBlock) throws IOException {
        if (fileBlock < DIRECT) {
            return inode.slot((int) fileBlock);
        }
        long indirect = inode.slot(INDIRECT);
        return indirect == 0 ? 0 : Integer.toUnsignedLong(meta.read(indirect).getInt(4 * (int) (fileBlock - DIRECT)));
    }

    private void setPointer(BlockSpace space, SkeletonInode inode, long fileBlock, long block) throws IOException {
        if (fileBlock < DIRECT) {
            inode.setSlot((int) fileBlock, block);
        } else {
            space.write(inode.slot(INDIRECT)).putInt(4 * (int) (fileBlock - DIRECT), (int) block);
        }
    }

    /** Extends the run while the next pointer continues it (the next device block, or another hole). */
    @Override
    public Run map(MetaReader meta, SkeletonInode inode, long fileBlock, long maxCount) throws IOException {
        long first = pointer(meta, inode, fileBlock);
        long count = 1;
        while (count < maxCount && continues(first, pointer(meta, inode, fileBlock + count), count)) {
            count++;
        }
        return first == 0 ? Run.hole(fileBlock, count) : Run.mapped(fileBlock, count, first);
    }

    /**
     * @param first the run's first device block (0 for a hole)
     * @param next the device block of the file block {@code count} blocks further
     * @param count blocks in the run so far
     * @return whether that block extends the run
     */
    protected boolean continues(long first, long next, long count) {
        return first == 0 ? next == 0 : next == first + count;
    }

    /**
     * Allocates the run after the previous file block's device block if it can; a run never crosses from
     * the direct pointers into the indirect block. Reaching the indirect region for the first time
     * allocates the indirect block first, and gives it back if the data blocks cannot be had.
     */
    @Override
    public Run allocate(BlockSpace space, SkeletonInode inode, long fileBlock, long count) throws IOException {
        long want = fileBlock < DIRECT ? Math.min(count, DIRECT - fileBlock) : count;
        long near = fileBlock == 0 ? -1 : pointer(space, inode, fileBlock - 1);
        long indirect = 0;
        if (fileBlock >= DIRECT && inode.slot(INDIRECT) == 0) {
            indirect = allocateBlocks(space, near, 1).start();
        }
        BlockRange data;
        try {
            data = allocateBlocks(space, indirect != 0 ? indirect : near, want);
        } catch (NoSpaceException e) {
            if (indirect != 0) {
                releaseUnusedIndirect(space, indirect);
            }
            throw e;
        }
        if (indirect != 0) {
            space.create(indirect);
            inode.setSlot(INDIRECT, indirect);
        }
        for (long b = 0; b < data.length(); b++) {
            setPointer(space, inode, fileBlock + b, data.start() + b);
        }
        return allocated(fileBlock, data);
    }

    /**
     * @param space the bitmap
     * @param near the block to allocate after (-1: anywhere)
     * @param count blocks wanted
     * @return the blocks allocated
     * @throws NoSpaceException if none is free
     */
    protected BlockRange allocateBlocks(BlockSpace space, long near, long count) throws NoSpaceException {
        return space.allocate(near, count);
    }

    /**
     * @param fileBlock the first file block
     * @param data the device blocks just allocated for it
     * @return the run to report: fresh, so that the skeleton maps it NEW
     */
    protected Run allocated(long fileBlock, BlockRange data) {
        return Run.allocated(fileBlock, data.length(), data.start());
    }

    /**
     * An indirect block allocated for a write that then found no data block: it goes back.
     *
     * @param space the bitmap
     * @param indirect the block
     */
    protected void releaseUnusedIndirect(BlockSpace space, long indirect) {
        space.free(indirect, 1);
    }

    /** Frees each mapped block in the range, then the indirect block once it maps nothing. */
    @Override
    public void free(BlockSpace space, SkeletonInode inode, long from, long to, FreeReason reason) throws IOException {
        long end = Math.min(to, inode.slot(INDIRECT) == 0 ? DIRECT : maxFileBlocks(space.blockSize()));
        for (long b = from; b < end; b++) {
            long block = pointer(space, inode, b);
            if (block != 0) {
                space.free(block, 1);
                setPointer(space, inode, b, 0);
            }
        }
        long indirect = inode.slot(INDIRECT);
        if (indirect != 0 && to > DIRECT && mapsNothing(space, indirect)) {
            space.free(indirect, 1);
            inode.setSlot(INDIRECT, 0);
        }
    }

    private static boolean mapsNothing(MetaReader meta, long indirect) throws IOException {
        var pointers = meta.read(indirect);
        for (int i = 0; i < meta.blockSize(); i += 4) {
            if (pointers.getInt(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Every mapped block, then the indirect block. */
    @Override
    public void owned(MetaReader meta, SkeletonInode inode, LongConsumer owned) throws IOException {
        long end = inode.slot(INDIRECT) == 0 ? DIRECT : maxFileBlocks(meta.blockSize());
        for (long b = 0; b < end; b++) {
            long block = pointer(meta, inode, b);
            if (block != 0) {
                owned.accept(block);
            }
        }
        if (inode.slot(INDIRECT) != 0) {
            owned.accept(inode.slot(INDIRECT));
        }
    }
}
