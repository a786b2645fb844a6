package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.testkit.TestData.buffer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.InvalidRangeException;
import dev.iomap.core.mm.Folio;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.api.NoDataException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Seek data and seek hole over every mapping type, with the page cache probe for holes and unwritten
 * extents: 1 KiB blocks in 4 KiB pages, so a folio has four blocks with state of their own.
 */
class SeekTest {
    private static final int K1 = 1024;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K1, 16L << 20);
    private final IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(2).build(), device);
    private final ExtentTestOps ops = new ExtentTestOps(K1);

    private CachedInode inode(long size) {
        return cache.addInode(1, K1, size, MAX, ops, ops);
    }

    private static void write(CachedInode inode, long pos, int length) throws Exception {
        assertThat(inode.write(pos, CopySource.of(buffer(7, pos, length)), length)).isEqualTo(length);
    }

    @Test
    void anEmptyFileHasNeitherDataNorHoleToSeek() {
        CachedInode inode = inode(0);
        assertThatThrownBy(() -> inode.seekData(0)).isInstanceOf(NoDataException.class)
                .hasMessageContaining("offset 0 is at or past EOF (size 0)");
        assertThatThrownBy(() -> inode.seekHole(0)).isInstanceOf(NoDataException.class);
        assertThat(ops.requests()).as("nothing asked of the adapter").isEmpty();
    }

    @Test
    void aNegativeOffsetIsRefused() {
        CachedInode inode = inode(4 * K1);
        assertThatThrownBy(() -> inode.seekData(-1)).isInstanceOf(InvalidRangeException.class)
                .hasMessageContaining("negative offset -1");
        assertThatThrownBy(() -> inode.seekHole(-1)).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void dataThenHoleThenDataAtBlockAndByteOffsets() throws Exception {
        ops.set(0, 2, IomapType.MAPPED);
        ops.set(5, 1, IomapType.MAPPED);
        long size = 6L * K1 - 100;
        CachedInode inode = inode(size);

        assertThat(inode.seekData(0)).isEqualTo(0);
        assertThat(inode.seekData(K1 + 7)).isEqualTo(K1 + 7);
        assertThat(inode.seekHole(0)).isEqualTo(2 * K1);
        assertThat(inode.seekHole(K1 + 7)).isEqualTo(2 * K1);
        assertThat(inode.seekData(2 * K1)).isEqualTo(5 * K1);
        assertThat(inode.seekData(3 * K1 + 1)).isEqualTo(5 * K1);
        assertThat(inode.seekHole(3 * K1 + 1)).isEqualTo(3 * K1 + 1);
        assertThat(inode.seekHole(5 * K1)).as("EOF is a hole").isEqualTo(size);
        assertThat(inode.seekData(size - 1)).isEqualTo(size - 1);
        assertThatThrownBy(() -> inode.seekData(size)).isInstanceOf(NoDataException.class);
        assertThatThrownBy(() -> inode.seekHole(size)).isInstanceOf(NoDataException.class);
        assertThatThrownBy(() -> inode.seekHole(size + 5000)).isInstanceOf(NoDataException.class);
        assertThat(ops.requests()).as("every mapping asked for with REPORT alone")
                .isNotEmpty().containsOnly(Set.of(IomapRequest.REPORT));
        assertThat(inode.pageCache().folioCount()).as("seeking caches nothing").isZero();
        assertThat(device.stats().reads()).isZero();
    }

    @Test
    void aHoleUpToEofHasNoDataAfterIt() throws Exception {
        ops.set(0, 1, IomapType.DELALLOC);
        CachedInode inode = inode(8 * K1);
        assertThat(inode.seekData(0)).as("delalloc is data").isEqualTo(0);
        assertThat(inode.seekHole(0)).isEqualTo(K1);
        assertThatThrownBy(() -> inode.seekData(K1)).isInstanceOf(NoDataException.class)
                .hasMessageContaining("only holes from 1024 to EOF (size 8192)");
    }

    @Test
    void unwrittenIsAHoleExceptWhereTheCacheHoldsUptodateBlocks() throws Exception {
        ops.set(0, 16, IomapType.UNWRITTEN);
        CachedInode inode = inode(16 * K1);
        assertThatThrownBy(() -> inode.seekData(0)).isInstanceOf(NoDataException.class);
        assertThat(inode.seekHole(0)).isEqualTo(0);

        write(inode, K1 + 10, 10);            // one block of folio 0, sub-block
        write(inode, 9 * K1, 2 * K1);         // blocks 9 and 10, in folio 2
        assertThat(inode.pageCache().lookup(0).state().isBlockUptodate(0)).isFalse();

        assertThat(inode.seekData(0)).isEqualTo(K1);
        assertThat(inode.seekData(K1 + 512)).isEqualTo(K1 + 512);
        assertThat(inode.seekHole(K1)).isEqualTo(2 * K1);
        assertThat(inode.seekData(2 * K1)).isEqualTo(9 * K1);
        assertThat(inode.seekHole(9 * K1 + 3)).isEqualTo(11 * K1);
        assertThatThrownBy(() -> inode.seekData(11 * K1)).isInstanceOf(NoDataException.class);

        inode.writeAndWait(0, Long.MAX_VALUE);
        assertThat(ops.blocks()).containsEntry(1L, IomapType.MAPPED).containsEntry(9L, IomapType.MAPPED)
                .containsEntry(10L, IomapType.MAPPED).containsEntry(2L, IomapType.UNWRITTEN);
        assertThat(inode.seekData(2 * K1)).as("after writeback").isEqualTo(9 * K1);
        assertThat(inode.seekHole(K1)).isEqualTo(2 * K1);
    }

    @Test
    void zeroesReadFromAnUnwrittenExtentCountAsDataAsInTheKernel() throws Exception {
        ops.set(0, 8, IomapType.UNWRITTEN);
        CachedInode inode = inode(8 * K1);
        assertThat(read(inode.open(), 4 * K1 + 1, 1)).containsExactly(0);
        assertThat(inode.seekData(0)).as("the whole uptodate folio 1").isEqualTo(4 * K1);
        assertThat(inode.seekHole(4 * K1)).isEqualTo(8 * K1);
    }

    @Test
    void dirtyDataOverAHoleIsDataBeforeAndAfterWriteback() throws Exception {
        CachedInode inode = inode(0);
        write(inode, 6 * K1 + 100, 300);      // block 6 dirty; 0..5 zeroed by nobody: holes
        assertThat(ops.blocks()).as("the adapter allocates only at writeback").isEmpty();

        assertThat(inode.seekData(0)).isEqualTo(6 * K1);
        assertThat(inode.seekHole(6 * K1)).isEqualTo(6 * K1 + 400);
        assertThat(inode.seekHole(0)).isEqualTo(0);
        assertThat(ops.blocks()).as("seeking allocated nothing").isEmpty();

        inode.writeAndWait(0, Long.MAX_VALUE);
        assertThat(ops.blocks()).containsOnlyKeys(6L);
        assertThat(inode.seekData(0)).as("after writeback").isEqualTo(6 * K1);
        assertThat(inode.seekHole(6 * K1)).isEqualTo(6 * K1 + 400);
    }

    @Test
    void aFolioUnderWritebackOverAHoleIsData() throws Exception {
        List<CompletableFuture<Void>> held = new ArrayList<>();
        BlockDevice holding = new ForwardingBlockDevice(device) {
            @Override
            public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
                CompletableFuture<Void> done = new CompletableFuture<>();
                CompletableFuture<Void> write = delegate.write(offset, srcs, purpose);
                synchronized (held) {
                    held.add(done);
                }
                return write.thenCompose(ignored -> done);
            }
        };
        IomapCache async = new IomapCache(PageCacheOptions.builder().maxFolioOrder(2).build(), holding);
        ops.publishAtCompletion();
        CachedInode inode = async.addInode(1, K1, 0, MAX, ops, ops);
        write(inode, 0, 4 * K1 + 10);

        inode.writeback(0, Long.MAX_VALUE, false);
        Folio folio = inode.pageCache().lookup(0);
        assertThat(folio.isWriteback()).isTrue();
        assertThat(folio.isDirty()).isFalse();
        assertThat(ops.blocks()).as("the blocks are published at completion").isEmpty();

        assertThat(inode.seekData(0)).as("data in flight").isEqualTo(0);
        assertThat(inode.seekHole(0)).isEqualTo(4 * K1 + 10);

        synchronized (held) {
            held.forEach(done -> done.complete(null));
        }
        inode.writeAndWait(0, Long.MAX_VALUE);
        assertThat(ops.blocks()).containsOnlyKeys(0L, 1L, 2L, 3L, 4L);
        assertThat(inode.seekHole(0)).isEqualTo(4 * K1 + 10);
        async.close();
    }

    @Test
    void cleanCachedZeroesOverAHoleAreAHole() throws Exception {
        ops.set(3, 1, IomapType.MAPPED);
        CachedInode inode = inode(8 * K1);
        assertThat(read(inode.open(), 0, 8 * K1)).hasSize(8 * K1);
        assertThat(inode.pageCache().lookup(0).isUptodate()).isTrue();
        assertThat(inode.seekData(0)).isEqualTo(3 * K1);
        assertThat(inode.seekHole(3 * K1)).isEqualTo(4 * K1);
        assertThatThrownBy(() -> inode.seekData(4 * K1)).isInstanceOf(NoDataException.class);
    }

    @Test
    void aHoleIsBelievedOnlyIfItsMappingIsStillValid() throws Exception {
        CachedInode inode = inode(0);
        write(inode, 0, 4 * K1);
        // Between the report of the hole and the look into the cache, writeback gives the dirty folio
        // blocks and the folio is dropped: the hole the report saw no longer exists.
        ops.afterNextReport(() -> inode.flushAndInvalidate(0, 4 * K1));

        assertThat(inode.seekData(0)).isEqualTo(0);

        assertThat(inode.pageCache().folioCount()).isZero();
        assertThat(ops.requests().stream().filter(r -> r.contains(IomapRequest.REPORT)).count())
                .as("the stale hole was looked up again").isEqualTo(2);
    }

    @Test
    void seekRunsUnderTheSharedInodeLockSoAWriterHoldingItCanSeek() throws Exception {
        ops.set(1, 1, IomapType.MAPPED);
        CachedInode inode = inode(4 * K1);
        long[] found = new long[1];
        inode.withExclusiveLock(() -> found[0] = inode.seekData(0));
        assertThat(found[0]).isEqualTo(K1);
    }
}
