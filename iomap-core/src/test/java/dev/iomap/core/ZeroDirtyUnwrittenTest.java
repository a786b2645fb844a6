package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.IomapType;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Zeroing over unwritten extents that have dirty cache on top (the kernel's {@code iomap_zero_range}
 * with a folio batch, Linux 6.19): the dirty folios are zeroed in the cache, nothing is written back
 * first, and the zeroes are what reads, writeback and a later read from the device see.
 */
class ZeroDirtyUnwrittenTest {
    private static final int K1 = 1024;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K1, 16L << 20);
    private final ExtentTestOps ops = new ExtentTestOps(K1);

    private IomapCache cacheOverStaleDevice() {
        // the preallocated blocks hold old bytes on the device: an unwritten extent must never show them
        device.write(0, ByteBuffer.wrap(pattern(9, 0, 16 * K1)), IoPurpose.DATA).join();
        ops.set(0, 16, IomapType.UNWRITTEN);
        ops.publishAtCompletion();
        return new IomapCache(PageCacheOptions.builder().maxFolioOrder(2).build(), device);
    }

    @Test
    void zeroRangeZeroesDirtyFoliosOverUnwrittenBlocksWithoutWritingThemBack() throws Exception {
        IomapCache cache = cacheOverStaleDevice();
        CachedInode inode = cache.addInode(1, K1, 16 * K1, MAX, ops, ops);
        OpenFile file = inode.open();
        file.write(0, buffer(1, 0, 8 * K1));
        long writtenBefore = device.stats().dataBytesWritten();

        inode.zeroRange(K1 + 100, 5 * K1);

        byte[] expected = new byte[16 * K1];
        System.arraycopy(pattern(1, 0, 8 * K1), 0, expected, 0, 8 * K1);
        Arrays.fill(expected, K1 + 100, 6 * K1 + 100, (byte) 0);
        assertThat(device.stats().dataBytesWritten()).isEqualTo(writtenBefore);
        assertThat(ops.blocks().values()).containsOnly(IomapType.UNWRITTEN);
        assertThat(read(file, 0, 16 * K1)).isEqualTo(expected);

        file.fsync();
        cache.dropCleanCache();
        assertThat(inode.pageCache().folioCount()).isZero();
        assertThat(read(file, 0, 16 * K1)).isEqualTo(expected);
        assertThat(readDevice(device, 0, 8 * K1)).isEqualTo(Arrays.copyOf(expected, 8 * K1));
    }

    @Test
    void truncateUpZeroesWhatAMappedStoreLeftPastEofOverUnwrittenBlocks() throws Exception {
        IomapCache cache = cacheOverStaleDevice();
        CachedInode inode = cache.addInode(1, K1, 1000, MAX, ops, ops);
        OpenFile file = inode.open();
        file.write(0, buffer(2, 0, 1000));
        // past EOF inside the last page, as mmap allows: dirty in the cache, never written back
        inode.map().store(1500, ByteBuffer.wrap(pattern(3, 0, 100)));
        long writtenBefore = device.stats().dataBytesWritten();

        inode.truncate(4000, null);

        byte[] expected = new byte[4000];
        System.arraycopy(pattern(2, 0, 1000), 0, expected, 0, 1000);
        assertThat(device.stats().dataBytesWritten()).isEqualTo(writtenBefore);
        assertThat(read(file, 0, 4000)).isEqualTo(expected);
        file.fsync();
        cache.dropCleanCache();
        assertThat(read(file, 0, 4000)).isEqualTo(expected);
    }

    @Test
    void zeroRangeLeavesCleanFoliosOverUnwrittenBlocksClean() throws Exception {
        IomapCache cache = cacheOverStaleDevice();
        CachedInode inode = cache.addInode(1, K1, 16 * K1, MAX, ops, ops);
        OpenFile file = inode.open();
        assertThat(read(file, 0, 16 * K1)).isEqualTo(new byte[16 * K1]);
        int cached = inode.pageCache().folioCount();

        inode.zeroRange(100, 12 * K1);

        assertThat(inode.pageCache().folioCount()).isEqualTo(cached);
        assertThat(inode.pageCache().hasDirty()).isFalse();
        assertThat(ops.blocks().values()).containsOnly(IomapType.UNWRITTEN);
    }

    @Test
    void zeroRangeOverDirtyDataInAHoleWritesItBackAndZeroesWhereItLanded() throws Exception {
        // holes everywhere: this adapter allocates a block only when writeback maps it
        IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(2).build(), device);
        CachedInode inode = cache.addInode(1, K1, 0, MAX, ops, ops);
        OpenFile file = inode.open();
        file.write(0, buffer(4, 0, 8 * K1));

        inode.zeroRange(K1 + 100, 2 * K1);

        byte[] expected = pattern(4, 0, 8 * K1);
        Arrays.fill(expected, K1 + 100, 3 * K1 + 100, (byte) 0);
        assertThat(ops.blocks()).hasSize(8);
        assertThat(read(file, 0, 8 * K1)).isEqualTo(expected);
        file.fsync();
        cache.dropCleanCache();
        assertThat(read(file, 0, 8 * K1)).isEqualTo(expected);
        assertThat(readDevice(device, 0, 8 * K1)).isEqualTo(expected);
    }
}
