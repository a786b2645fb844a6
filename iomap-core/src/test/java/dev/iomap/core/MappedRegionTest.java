package dev.iomap.core;

import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.core.mm.Folio;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapRequest;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.spi.Iomap;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MappedRegionTest {
    private static final int K1 = 1024;

    private final RamBlockDevice device = new RamBlockDevice(K1, 16L << 20);

    @Test
    void mkwriteDirtiesOnlyTheBlocksInsideEof() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(2).build(), device);
        SparseTestOps sparse = new SparseTestOps(K1);
        List<long[]> mapped = new ArrayList<>();
        MapBlocksWriteback recording = new MapBlocksWriteback() {
            @Override
            public Iomap mapBlocks(IomapInode inode, long pos, long length) {
                mapped.add(new long[] {pos, length});
                return sparse.mapBlocks(inode, pos, length);
            }
        };
        CachedInode inode = cache.addInode(1, K1, 0, 1L << 30, sparse, recording);
        OpenFile file = inode.open();
        file.write(0, buffer(1, 0, 16 * K1));   // one 16 KiB folio, whole: no state
        inode.truncate(5 * K1, () -> sparse.truncateBlocks(5 * K1));
        file.fsync();
        mapped.clear();

        inode.map().store(100, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        Folio folio = inode.pageCache().lookup(0);

        assertThat(folio.state().nextDirtyBlock(0, 16 * K1)).isZero();
        assertThat(folio.state().nextCleanBlock(0, 16 * K1)).isEqualTo(5 * K1);
        file.write(12 * K1, buffer(2, 12 * K1, K1));
        file.fsync();
        assertThat(mapped).extracting(range -> List.of(range[0], range[1]))
                .containsExactly(List.of(0L, 5L * K1), List.of(12L * K1, (long) K1));
    }

    @Test
    void storesPastEofInTheLastPageAreNeverWrittenBack() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        SparseTestOps ops = new SparseTestOps(K1);
        CachedInode inode = cache.addInode(1, K1, 0, 1L << 30, ops, ops);
        inode.open().write(0, buffer(3, 0, 1000));

        inode.map().store(990, ByteBuffer.wrap(new byte[] {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}));
        inode.open().fsync();

        byte[] expected = new byte[K1];
        System.arraycopy(pattern(3, 0, 1000), 0, expected, 0, 990);
        Arrays.fill(expected, 990, 1000, (byte) 9);
        assertThat(readDevice(device, 0, K1)).isEqualTo(expected);
        assertThat(inode.size()).isEqualTo(1000);
    }

    @Test
    void accessBeyondTheLastPageIsRefused() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        SparseTestOps ops = new SparseTestOps(K1);
        CachedInode inode = cache.addInode(1, K1, 0, 1L << 30, ops, ops);
        inode.open().write(0, buffer(4, 0, 1000));

        assertThatThrownBy(() -> inode.map().store(4096, ByteBuffer.wrap(new byte[1])))
                .isInstanceOf(InvalidRangeException.class).hasMessageContaining("last page");
        ByteBuffer loaded = ByteBuffer.allocate(4096);
        inode.map().load(0, loaded);
        assertThat(loaded.array()[999]).isEqualTo(pattern(4, 0, 1000)[999]);
        assertThat(loaded.array()[1000]).isZero();
    }

    @Test
    void dirtyFolioMarksEveryBlockDirtyAndCreatesTheStateIfMissing() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(0).build(), device);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        CachedInode inode = cache.addInode(1, K1, 0, 1L << 30, mapping, mapping);
        OpenFile file = inode.open();
        file.write(0, buffer(5, 0, 4 * K1));
        file.fsync();
        Folio folio = inode.pageCache().lookup(0);
        folio.lock();
        Invalidate.releaseFolio(folio);
        folio.unlock();
        long before = device.stats().dataBytesWritten();

        assertThat(inode.dirtyFolio(0)).isTrue();

        assertThat(folio.state()).isNotNull();
        assertThat(folio.state().nextCleanBlock(0, 4 * K1)).isEqualTo(4 * K1);
        file.fsync();
        assertThat(device.stats().dataBytesWritten() - before).isEqualTo(4 * K1);
    }

    @Test
    void mkwriteAsksTheAdapterForAFaultWrite() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        SparseTestOps sparse = new SparseTestOps(K1);
        List<Set<IomapRequest>> requests = new ArrayList<>();
        dev.iomap.spi.IomapOps spying = new dev.iomap.spi.IomapOps() {
            @Override
            public dev.iomap.spi.IomapMapping begin(IomapInode inode, long pos, long length,
                    Set<IomapRequest> request) {
                requests.add(request);
                return sparse.begin(inode, pos, length, request);
            }
        };
        CachedInode inode = cache.addInode(1, K1, 0, 1L << 30, spying, sparse);
        inode.open().write(0, buffer(6, 0, 2000));
        requests.clear();

        inode.map().store(10, ByteBuffer.wrap(new byte[] {1}));

        // (a plain read of the folio's missing blocks comes first, with no request flags)
        assertThat(requests.stream().filter(request -> !request.isEmpty()))
                .containsExactly(Set.of(IomapRequest.WRITE, IomapRequest.FAULT));
    }

    @Test
    void aStoreWhoseFaultFailsLeavesTheFolioAsItWas() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        SparseTestOps sparse = new SparseTestOps(K1);
        dev.iomap.spi.IomapOps full = (inode, pos, length, request) -> {
            if (request.contains(IomapRequest.FAULT)) {
                throw new dev.iomap.api.NoSpaceException("no space for the fault at " + pos);
            }
            return sparse.begin(inode, pos, length, request);
        };
        CachedInode inode = cache.addInode(1, K1, 0, 1L << 30, full, sparse);
        inode.open().write(0, buffer(7, 0, 2000));

        assertThatThrownBy(() -> inode.map().store(10, ByteBuffer.wrap(new byte[] {1, 2, 3})))
                .isInstanceOf(dev.iomap.api.NoSpaceException.class);

        ByteBuffer loaded = ByteBuffer.allocate(2000);
        inode.map().load(0, loaded);
        assertThat(loaded.array()).isEqualTo(pattern(7, 0, 2000));
    }
}
