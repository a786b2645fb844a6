package dev.iomap.adapter.support.skeleton;

import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What a mount gives its {@link BlockMapModel}: the bitmap allocator and journalled metadata blocks.
 * Called with the mount's lock held; not thread-safe.
 *
 * <p>Allocation hands out blocks free in the bitmap and not freed since the last commit. {@link #free}
 * clears the bitmap for the next commit, and the block is handed out again only once that commit is
 * durable (and revoked in it, so that an old journalled image never overwrites its next owner's data).
 * Metadata blocks written with {@link #write} are logged whole at the next commit.
 */
public interface BlockSpace extends MetaReader {

    /**
     * Allocates contiguous blocks in the data area, as close after {@code near} as the bitmap allows.
     *
     * @param near a block to allocate after (-1: no preference)
     * @param count blocks wanted, at least 1
     * @return the first block and how many (1 to {@code count})
     * @throws NoSpaceException if no block is free
     */
    dev.iomap.adapter.support.BlockRange allocate(long near, long count) throws NoSpaceException;

    /**
     * Frees blocks: clear in the next commit's bitmap, reusable once it is durable. A model's metadata
     * block freed here is forgotten (its pending image is dropped).
     *
     * @param block the first block
     * @param count how many
     * @throws IllegalStateException if a block is not allocated (a double free)
     */
    void free(long block, long count);

    /**
     * A metadata block to change: the current image (zeroes for a block never written as metadata
     * since it was allocated), logged at the next commit. Changes made to the buffer are that image.
     *
     * @param block an allocated block the model uses as metadata
     * @return its image, writable, little-endian, position 0
     * @throws IOException if the device fails
     */
    ByteBuffer write(long block) throws IOException;

    /**
     * A fresh metadata block: all zeroes, logged at the next commit.
     *
     * @param block an allocated block
     * @return its image, writable, little-endian, position 0
     */
    ByteBuffer create(long block);
}
