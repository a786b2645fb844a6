package dev.iomap.core;

import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.device.IoPurpose;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.spi.WritebackOps;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class UnshareTest {
    private static final int K4 = 4096;
    private static final long SHARED_AT = 1 << 20;
    private static final long COPY_AT = 4 << 20;

    /** File blocks 0-15 are shared (data at SHARED_AT, copy-on-write destination COPY_AT); 16-31 private. */
    private static final class CowOps implements IomapOps, MapBlocksWriteback {
        final List<Set<IomapRequest>> requests = new ArrayList<>();

        @Override
        public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request) {
            requests.add(request);
            long start = pos & -K4;
            if (start < 16 * K4) {
                Iomap cow = new Iomap(start, 16 * K4 - start, IomapType.MAPPED, EnumSet.of(IomapFlag.SHARED),
                        COPY_AT + start, null, 0);
                return new IomapMapping(cow, Iomap.mapped(start, 16 * K4 - start, SHARED_AT + start));
            }
            return IomapMapping.of(Iomap.mapped(start, 32 * K4 - start, 2 * SHARED_AT + start));
        }

        @Override
        public Iomap mapBlocks(IomapInode inode, long pos, long length) {
            return pos < 16 * K4 ? Iomap.mapped(pos, 16 * K4 - pos, COPY_AT + pos)
                    : Iomap.mapped(pos, 32 * K4 - pos, 2 * SHARED_AT + pos);
        }
    }

    @Test
    void unshareReadsWholeSharedFoliosAndWritesThemToTheCopy() throws Exception {
        RamBlockDevice device = new RamBlockDevice(K4, 16L << 20);
        device.write(SHARED_AT, ByteBuffer.wrap(pattern(1, 0, 16 * K4)), IoPurpose.DATA).join();
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        CowOps ops = new CowOps();
        CachedInode inode = cache.addInode(1, K4, 32 * K4, 1L << 30, ops, ops);

        inode.unshare(0, 32 * K4);
        inode.open().fsync();

        assertThat(device.stats().bytesRead()).isEqualTo(16 * K4);
        assertThat(device.stats().dataBytesWritten() - 16 * K4).isEqualTo(16 * K4);
        assertThat(readDevice(device, COPY_AT, 16 * K4)).isEqualTo(pattern(1, 0, 16 * K4));
        assertThat(ops.requests).allMatch(r -> r.contains(IomapRequest.UNSHARE));
    }

    @Test
    void unsharePastEofDoesNothing() throws Exception {
        RamBlockDevice device = new RamBlockDevice(K4, 16L << 20);
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        CowOps ops = new CowOps();
        CachedInode inode = cache.addInode(1, K4, 4 * K4, 1L << 30, ops, ops);

        inode.unshare(8 * K4, 8 * K4);

        assertThat(ops.requests).isEmpty();
        assertThat(inode.pageCache().folioCount()).isZero();
    }
}
