package dev.iomap.core;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;

/**
 * Writeback ops whose {@code writebackRange} maps the range with one {@link #mapBlocks} call and adds
 * it to the ioend, as most filesystems' {@code writeback_range} does ({@code xfs_writeback_range}):
 * what the test adapters here need, with a single method to stub or verify.
 */
interface MapBlocksWriteback extends WritebackOps {

    /**
     * @param inode the file
     * @param pos first dirty byte, block aligned
     * @param length bytes of the dirty range
     * @return a MAPPED or UNWRITTEN mapping containing {@code pos}
     * @throws IOException if no blocks can be found
     */
    Iomap mapBlocks(IomapInode inode, long pos, long length) throws IOException;

    @Override
    default long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException {
        return wpc.addToIoend(mapBlocks(wpc.inode(), pos, length), pos, length);
    }
}
