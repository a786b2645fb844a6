package dev.iomap.adapter.bcachefs;

import dev.iomap.spi.DelallocPunch;
import dev.iomap.spi.IomapInode;
import java.io.IOException;

/**
 * The core's inode as the data path sees it, for tests that drive {@link DataPath} directly: a number, a
 * size, a block size; a short write punches the rest of its delayed allocation, as the core's does.
 */
record DataPathInode(long ino, long size, int blockSize) implements IomapInode {
    @Override
    public void releaseDelalloc(long pos, long length, long written, DelallocPunch punch) throws IOException {
        if (written < length) {
            punch.punch(this, pos + written, length - written);
        }
    }

    @Override
    public void writeAndWait(long start, long end) {
    }

    @Override
    public void shrinkSizeAfterLostWrite(long size) {
    }
}
