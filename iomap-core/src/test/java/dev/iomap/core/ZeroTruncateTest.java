package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.core.mm.Folio;
import dev.iomap.device.IoPurpose;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ZeroTruncateTest {
    private static final int K1 = 1024;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K1, 16L << 20);

    private static PageCacheOptions poisoned() {
        return PageCacheOptions.builder().poisonNewFolios(true).maxFolioOrder(4).build();
    }

    private void fillDevice(long offset, byte[] bytes) {
        device.write(offset, ByteBuffer.wrap(bytes), IoPurpose.DATA).join();
    }

    @Test
    void zeroRangeOverAHoleTouchesNoCache() throws Exception {
        IomapCache cache = new IomapCache(poisoned(), device);
        SparseTestOps ops = new SparseTestOps(K1);
        CachedInode inode = cache.addInode(1, K1, 64 * K1, MAX, ops, ops);

        inode.zeroRange(3 * K1 + 5, 20 * K1);

        assertThat(inode.pageCache().folioCount()).isZero();
        assertThat(ops.allocatedBlocks()).isZero();
    }

    @Test
    void zeroRangeOfMappedBlocksReadsOnlyPartialEdgesAndDirtiesTheRange() throws Exception {
        fillDevice(0, pattern(1, 0, 16 * K1));
        IomapCache cache = new IomapCache(poisoned(), device);
        CachedInode inode = cache.addInode(1, K1, 16 * K1, MAX, new BlockDeviceMapping(device),
                new BlockDeviceMapping(device));

        inode.zeroRange(K1 + 100, 3 * K1);
        inode.open().fsync();

        assertThat(device.stats().reads()).isEqualTo(2);
        assertThat(device.stats().dataBytesWritten() - 16 * K1).isEqualTo(4 * K1);
        byte[] expected = pattern(1, 0, 16 * K1);
        Arrays.fill(expected, K1 + 100, 4 * K1 + 100, (byte) 0);
        assertThat(readDevice(device, 0, 16 * K1)).isEqualTo(expected);
    }

    @Test
    void partialZeroingOfANewBlockMarksOnlyWhatItWroteUptodate() throws Exception {
        IomapCache cache = new IomapCache(poisoned(), device);
        CachedInode inode = cache.addInode(1, K1, 0, MAX, new BlockDeviceMapping(device),
                new BlockDeviceMapping(device));

        inode.zeroRange(100, 200);   // past EOF: zeroed in write_begin, not read

        Folio folio = inode.pageCache().lookup(0);
        assertThat(folio.state().isBlockUptodate(0)).isTrue();
        assertThat(folio.state().isBlockUptodate(K1)).isFalse();
        assertThat(folio.isUptodate()).isFalse();
        assertThat(device.stats().reads()).isZero();
        inode.truncate(4 * K1, null);
        assertThat(read(inode.open(), 0, 4 * K1)).isEqualTo(new byte[4 * K1]);
    }

    @Test
    void zeroingPastEofNeverMovesEof() throws Exception {
        IomapCache cache = new IomapCache(poisoned(), device);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        CachedInode inode = cache.addInode(1, K1, 3000, MAX, mapping, mapping);

        inode.zeroRange(2000, 10 * K1);

        assertThat(inode.size()).isEqualTo(3000);
        assertThat(inode.open().read(3000, ByteBuffer.allocate(10))).isEqualTo(-1);
    }

    @Test
    void truncateDownZeroesThePartialBlockAndDropsWhatIsPastEof() throws Exception {
        IomapCache cache = new IomapCache(poisoned(), device);
        SparseTestOps ops = new SparseTestOps(K1);
        CachedInode inode = cache.addInode(1, K1, 0, MAX, ops, ops);
        OpenFile file = inode.open();
        file.write(0, buffer(2, 0, 64 * K1));
        file.fsync();
        file.write(8 * K1, buffer(3, 8 * K1, 40 * K1));   // dirty past the new EOF too

        inode.truncate(10 * K1 + 300, () -> ops.truncateBlocks(10 * K1 + 300));
        Folio straddling = inode.pageCache().lookup(0);
        assertThat(straddling.size()).isEqualTo(64 * K1);
        assertThat(straddling.state().nextDirtyBlock(11 * K1, 64 * K1)).isEqualTo(-1);
        file.fsync();
        inode.truncate(20 * K1, null);

        byte[] expected = new byte[20 * K1];
        System.arraycopy(pattern(2, 0, 8 * K1), 0, expected, 0, 8 * K1);
        System.arraycopy(pattern(3, 8 * K1, 40 * K1), 0, expected, 8 * K1, 2 * K1 + 300);
        assertThat(read(file, 0, 20 * K1)).isEqualTo(expected);
        assertThat(Arrays.copyOfRange(readDevice(device, 10 * K1, K1), 300, K1)).isEqualTo(new byte[K1 - 300]);
        assertThat(ops.allocatedBlocks()).isEqualTo(11);
        cache.dropCleanCache();
        assertThat(read(file, 0, 20 * K1)).isEqualTo(expected);
    }

    @Test
    void truncateUpShowsZeroesNotStaleDeviceData() throws Exception {
        fillDevice(0, pattern(4, 0, 32 * K1));
        IomapCache cache = new IomapCache(poisoned(), device);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        CachedInode inode = cache.addInode(1, K1, 5000, MAX, mapping, mapping);

        inode.truncate(20000, null);

        byte[] expected = new byte[20000];
        System.arraycopy(pattern(4, 0, 5000), 0, expected, 0, 5000);
        assertThat(read(inode.open(), 0, 20000)).isEqualTo(expected);
        inode.open().fsync();
        cache.dropCleanCache();
        assertThat(read(inode.open(), 0, 20000)).isEqualTo(expected);
    }

    @Test
    void aWritePastEofZeroesTheGap() throws Exception {
        fillDevice(0, pattern(5, 0, 32 * K1));
        IomapCache cache = new IomapCache(poisoned(), device);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        CachedInode inode = cache.addInode(1, K1, 1000, MAX, mapping, mapping);

        inode.open().write(9000, ByteBuffer.wrap(new byte[] {7}));

        byte[] expected = new byte[9001];
        System.arraycopy(pattern(5, 0, 1000), 0, expected, 0, 1000);
        expected[9000] = 7;
        assertThat(read(inode.open(), 0, 9001)).isEqualTo(expected);
    }
}
