package dev.iomap.adapter.zonefs;

import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NotSupportedException.Refusal;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackOps;
import dev.iomap.device.Zone;
import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZonedBlockDevice;
import java.io.IOException;
import java.util.Set;

/**
 * How zone files map, the zonefs way: every block of a file lives at the same offset in its zone.
 *
 * <p>A conventional file is mapped ({@code MAPPED}) over its whole capacity, for reads, writes,
 * mapped writes and writeback alike. A sequential file is mapped below its size and is a hole above
 * it for reads; a buffered write must append whole blocks at the size (the write pointer of the
 * file), which {@link #begin} checks before the core touches the cache, and gets an
 * {@code UNWRITTEN} mapping up to the capacity. A report (seek's {@code REPORT}) gets what a read
 * gets: all data in a conventional file, data below the size of a sequential one. Writeback maps the dirty blocks where they belong;
 * the core submits a sequential file's ioends in file order ({@link #writesInFileOrder}) and the
 * zoned device accepts them only at the write pointer. When a write fails, the file's size falls
 * back to the zone's write pointer, as zonefs does ({@link #ioendCompleted}); the core reports the
 * error at the next fsync.
 *
 * <p>Thread-safe: called for many inodes at once, and for one inode from the writer and writeback.
 */
final class ZoneFileOps implements IomapOps, WritebackOps {
    private final ZonefsLikeMount mount;
    private final ZonedBlockDevice device;
    private final long blockSize;

    ZoneFileOps(ZonefsLikeMount mount, ZonedBlockDevice device, int blockSize) {
        this.mount = mount;
        this.device = device;
        this.blockSize = blockSize;
    }

    @Override
    public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request)
            throws IOException {
        ZoneFile file = mount.file(inode.ino());
        long aligned = pos & -blockSize;
        if (!file.isSequential()) {
            if (request.contains(IomapRequest.WRITE) && pos + length > file.capacity()) {
                throw pastCapacity(file, pos, length);
            }
            return IomapMapping.of(aligned < file.capacity() ? mapped(file, aligned, file.capacity())
                    : hole(file, aligned, length));
        }
        long size = inode.size();
        if (request.contains(IomapRequest.FAULT)) {
            throw new SequentialFileException(file + ": a sequential zone file cannot be written through a"
                    + " shared mapping (its blocks are written once, in order); append with write instead",
                    Refusal.INVALID_ARGUMENT);
        }
        if (request.contains(IomapRequest.UNSHARE)) {
            throw new SequentialFileException(file + ": a sequential zone file shares no blocks to unshare",
                    Refusal.INVALID_ARGUMENT);
        }
        if (request.contains(IomapRequest.ZERO)) {
            if (pos < size) {
                throw new SequentialFileException(file + ": zeroing written blocks of a sequential zone file"
                        + " (at " + pos + ", size " + size + ") would overwrite them", Refusal.INVALID_ARGUMENT);
            }
            return IomapMapping.of(hole(file, aligned, length));
        }
        if (request.contains(IomapRequest.WRITE)) {
            checkAppend(file, size, pos, length);
            return IomapMapping.of(new Iomap(pos, file.capacity() - pos, IomapType.UNWRITTEN, Set.of(),
                    file.zoneStart() + pos, null, 0));
        }
        if (aligned < size) {
            return IomapMapping.of(mapped(file, aligned, (size + blockSize - 1) & -blockSize));
        }
        return IomapMapping.of(hole(file, aligned, length));
    }

    /** A buffered write to a sequential file: whole blocks, exactly at the size, inside the capacity. */
    private void checkAppend(ZoneFile file, long size, long pos, long length) throws IOException {
        if (pos < size) {
            throw new SequentialFileException(file + ": write at " + pos + " would overwrite data below the"
                    + " size " + size + "; a sequential zone file is append-only, write at " + size,
                    Refusal.INVALID_ARGUMENT);
        }
        if (pos > size) {
            throw new SequentialFileException(file + ": write at " + pos + " would leave a hole after the size "
                    + size + "; a sequential zone file has no holes, write at " + size,
                    Refusal.INVALID_ARGUMENT);
        }
        if (pos + length > file.capacity()) {
            throw pastCapacity(file, pos, length);
        }
        if ((length & (blockSize - 1)) != 0) {
            throw new InvalidRangeException(file + ": an append of " + length + " bytes is not a whole number"
                    + " of " + blockSize + "-byte blocks; a zone's write pointer moves in whole blocks");
        }
    }

    private static InvalidRangeException pastCapacity(ZoneFile file, long pos, long length) {
        return new InvalidRangeException(file + ": write of " + length + " bytes at " + pos
                + " passes the zone capacity " + file.capacity() + " (the largest size of this file)");
    }

    private static Iomap mapped(ZoneFile file, long offset, long end) {
        return Iomap.mapped(offset, end - offset, file.zoneStart() + offset);
    }

    private Iomap hole(ZoneFile file, long offset, long length) {
        long end = Math.max(file.capacity(), (offset + length + blockSize - 1) & -blockSize);
        return Iomap.hole(offset, Math.max(end - offset, blockSize));
    }

    /** {@code zonefs_writeback_range}: the zone's blocks where they are, up to its capacity. */
    @Override
    public long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException {
        ZoneFile file = mount.file(wpc.inode().ino());
        if (pos + length > file.capacity()) {
            throw pastCapacity(file, pos, length);
        }
        return wpc.addToIoend(mapped(file, pos, file.capacity()), pos, length);
    }

    @Override
    public boolean writesInFileOrder(IomapInode inode) {
        ZoneFile file = mount.fileOrNull(inode.ino());
        return file != null && file.isSequential();
    }

    /**
     * A sequential file's acknowledged size grows with each completed ioend. After a failed one, the
     * zone's write pointer is what the device holds: the file falls back to it (zonefs'
     * {@code zonefs_io_error}); an offline zone holds nothing readable.
     */
    @Override
    public void ioendCompleted(IomapInode inode, IoendCompletion completion) throws IOException {
        ZoneFile file = mount.file(inode.ino());
        if (!file.isSequential()) {
            return;
        }
        if (!completion.failed()) {
            file.writtenUpTo(completion.end());
            return;
        }
        Zone zone = device.zone(file.zoneIndex());
        long deviceSize = zone.condition() == ZoneCondition.OFFLINE ? 0 : zone.writtenBytes();
        file.resync(deviceSize);
        inode.shrinkSizeAfterLostWrite(deviceSize);
    }
}
