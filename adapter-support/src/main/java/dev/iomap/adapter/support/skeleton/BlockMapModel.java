package dev.iomap.adapter.support.skeleton;

import java.io.IOException;
import java.util.function.LongConsumer;

/**
 * An adapter's mapping model: how a file's blocks are found, allocated and freed. It is all an adapter
 * built on {@link SkeletonAdapter} has to write. The model keeps its per-file state in the inode's
 * {@link SkeletonInode#slot slots} (block pointers, an extent root) and in metadata blocks it allocates
 * from the {@link BlockSpace} (indirect blocks, tree nodes). The skeleton calls it with the mount's lock
 * held, for regular files and directories alike.
 *
 * <p>What the skeleton does around it: NEW on fresh runs until their write-back completes, the validity
 * cookie, short-write cleanup, deferred frees, the journal, and fsck of the bitmap against
 * {@link #owned}.
 */
public interface BlockMapModel {

    /** @return how many 64-bit slots each inode keeps for the model (written with the inode) */
    int inodeSlots();

    /**
     * @param blockSize the filesystem block size
     * @return how many blocks one file may have: the largest file size is this times the block size
     */
    long maxFileBlocks(int blockSize);

    /**
     * The run at {@code fileBlock}: mapped blocks contiguous on the device, or a hole up to the next mapped
     * block, at most {@code maxCount} blocks. Reports {@link Run#fresh()} false.
     *
     * @param meta the model's metadata blocks
     * @param inode the file
     * @param fileBlock the first block, below {@link #maxFileBlocks}
     * @param maxCount the most blocks to report, at least 1
     * @return the run starting at {@code fileBlock}
     * @throws IOException if a metadata block cannot be read
     */
    Run map(MetaReader meta, SkeletonInode inode, long fileBlock, long maxCount) throws IOException;

    /**
     * Allocates blocks for the hole at {@code fileBlock}: at least one, at most {@code count}, contiguous on
     * the device, and returns them as a {@link Run#allocated fresh} run. On {@link
     * dev.iomap.api.NoSpaceException} nothing is left allocated that the file does not own.
     *
     * @param space the allocator and metadata blocks
     * @param inode the file; the model updates its slots
     * @param fileBlock a hole's first block, below {@link #maxFileBlocks}
     * @param count blocks wanted (the hole's length at most)
     * @return the fresh run at {@code fileBlock}
     * @throws IOException {@link dev.iomap.api.NoSpaceException} if no block is free
     */
    Run allocate(BlockSpace space, SkeletonInode inode, long fileBlock, long count) throws IOException;

    /**
     * Frees the file's blocks in {@code [from, to)} (and metadata blocks no longer needed) through
     * {@link BlockSpace#free}.
     *
     * @param space the allocator and metadata blocks
     * @param inode the file; the model updates its slots
     * @param from the first file block
     * @param to the file block after the range ({@link Long#MAX_VALUE}: to the end)
     * @param reason why (the model frees the same way for each)
     * @throws IOException if a metadata block cannot be read
     */
    void free(BlockSpace space, SkeletonInode inode, long from, long to, FreeReason reason) throws IOException;

    /**
     * The fsck hook: every device block the file owns, data and metadata, once each.
     *
     * @param meta the model's metadata blocks, as the journal would leave them
     * @param inode the file
     * @param owned called with each block the file owns
     * @throws IOException if a metadata block cannot be read
     */
    void owned(MetaReader meta, SkeletonInode inode, LongConsumer owned) throws IOException;
}
