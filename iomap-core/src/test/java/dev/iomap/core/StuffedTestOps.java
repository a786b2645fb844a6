package dev.iomap.core;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WritebackOps;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Set;

/**
 * A gfs2-like test adapter for one file: while a write would end at or below {@code limit} bytes the
 * file is <em>stuffed</em> and {@code begin} returns {@code INLINE} with the adapter's live inline
 * buffer (which starts full of junk bytes, standing for whatever follows EOF in a dinode block);
 * {@code end} persists the buffer when something was written, as a dinode write would. A write,
 * zeroing or fault reaching past {@code limit} unstuffs: the inline bytes below EOF, zero-padded to
 * a block, are written to the device at {@code base}, and from then on file offset + base is the
 * device address of every block ({@code MAPPED}). Truncating back down does not restuff (as GFS2).
 */
final class StuffedTestOps implements IomapOps, MapBlocksWriteback {
    /** What the inline buffer holds past EOF before anything is written there. */
    static final byte JUNK = 0x5A;

    private final BlockDevice device;
    private final int blockSize;
    private final int limit;
    private final long base;
    private final byte[] inline;
    private boolean stuffed = true;
    private byte[] persisted;
    private long persistedSize;
    private int persists;
    private int mapBlocksCalls;
    private byte[] moved;

    StuffedTestOps(BlockDevice device, int blockSize, int limit, long base) {
        this.device = device;
        this.blockSize = blockSize;
        this.limit = limit;
        this.base = base;
        this.inline = new byte[limit];
        Arrays.fill(inline, JUNK);
        this.persisted = inline.clone();
    }

    synchronized boolean isStuffed() {
        return stuffed;
    }

    /** @return the first {@code size} bytes of the inline buffer as the last {@code end} persisted it */
    synchronized byte[] persisted(int size) {
        return Arrays.copyOf(persisted, size);
    }

    /** @return the file size the last persisting {@code end} saw */
    synchronized long persistedSize() {
        return persistedSize;
    }

    /** @return how many {@code end} calls persisted the inline buffer */
    synchronized int persists() {
        return persists;
    }

    synchronized int mapBlocksCalls() {
        return mapBlocksCalls;
    }

    /** @return the block written to the device when the file was unstuffed, or null if it was not */
    synchronized byte[] moved() {
        return moved;
    }

    @Override
    public synchronized IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request) {
        boolean writes = request.contains(IomapRequest.WRITE) || request.contains(IomapRequest.ZERO)
                || request.contains(IomapRequest.FAULT);
        if (stuffed && writes && pos + length > limit) {
            unstuff(inode.size());
        }
        if (stuffed) {
            if (pos < limit) {
                return IomapMapping.of(new Iomap(0, limit, IomapType.INLINE, Set.of(), Iomap.NULL_ADDR, inline, 0));
            }
            return IomapMapping.of(Iomap.hole(pos, length));
        }
        long start = pos & -blockSize;
        long end = (pos + length + blockSize - 1) & -blockSize;
        return IomapMapping.of(Iomap.mapped(start, end - start, base + start));
    }

    /** Moves the data out of the inode: gfs2's {@code gfs2_unstuff_dinode}, without touching folios. */
    private void unstuff(long size) {
        byte[] block = new byte[blockSize];
        System.arraycopy(inline, 0, block, 0, (int) size);
        device.write(base, ByteBuffer.wrap(block), IoPurpose.DATA).join();
        moved = block;
        stuffed = false;
    }

    @Override
    public synchronized void end(IomapInode inode, long pos, long length, long written, Set<IomapRequest> request,
            Iomap iomap) {
        if (iomap.type() == IomapType.INLINE && written > 0) {
            if (iomap.inlineData() != inline) {
                throw new IllegalStateException("end got another inline buffer than begin lent");
            }
            persisted = inline.clone();
            persistedSize = inode.size();
            persists++;
        }
    }

    @Override
    public synchronized Iomap mapBlocks(IomapInode inode, long pos, long length) {
        mapBlocksCalls++;
        if (stuffed) {
            throw new IllegalStateException("writeback asked to map a stuffed file at " + pos);
        }
        long start = pos & -blockSize;
        long end = (pos + length + blockSize - 1) & -blockSize;
        return Iomap.mapped(start, end - start, base + start);
    }
}
