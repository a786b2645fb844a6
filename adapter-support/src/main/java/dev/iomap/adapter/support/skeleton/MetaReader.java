package dev.iomap.adapter.support.skeleton;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Read access to a model's metadata blocks (an indirect block, a b-tree node): the mount's current
 * images (uncommitted changes included), or, in fsck, the image as the journal would leave it.
 */
public interface MetaReader {

    /** @return the filesystem block size */
    int blockSize();

    /**
     * @param block a device block in the data area holding a model's metadata
     * @return its contents, one block, little-endian, position 0; read-only
     * @throws IOException if the device fails
     */
    ByteBuffer read(long block) throws IOException;
}
