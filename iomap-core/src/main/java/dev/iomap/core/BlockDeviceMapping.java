package dev.iomap.core;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.util.Set;

/**
 * The mapping of a raw block device opened as a file: the kernel's {@code blkdev_iomap_begin}. File
 * offset equals device offset and every block is {@code MAPPED}, so the whole buffered path runs end
 * to end with no filesystem. Stateless and thread-safe.
 */
public final class BlockDeviceMapping implements IomapOps, WritebackOps {
    private final BlockDevice device;

    /** @param device the device the file covers */
    public BlockDeviceMapping(BlockDevice device) {
        this.device = device;
    }

    /** Every byte is mapped where it is (the kernel's {@code blkdev_iomap_begin}). */
    @Override
    public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request)
            throws InvalidRangeException {
        return IomapMapping.of(map(pos));
    }

    /** Every byte is mapped where it is (the kernel's {@code blkdev_writeback_range}). */
    @Override
    public long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException {
        return wpc.addToIoend(map(pos), pos, length);
    }

    private Iomap map(long pos) throws InvalidRangeException {
        if (pos < 0 || pos >= device.capacity()) {
            throw new InvalidRangeException("offset " + pos + " is outside the device of "
                    + device.capacity() + " bytes");
        }
        long start = pos & -device.blockSize();
        return Iomap.mapped(start, device.capacity() - start, start);
    }
}
