package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.spy;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.iomap.api.InvalidRangeException;
import dev.iomap.core.mm.Folio;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.spi.WritebackOps;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.mockito.InOrder;

class BufferedWriteTest {
    private static final int KIB = 1024;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(KIB, 64L * KIB * KIB);

    private IomapCache cache(PageCacheOptions options) {
        return new IomapCache(options, device);
    }

    private static PageCacheOptions options() {
        return PageCacheOptions.builder().pageSize(4096).maxFolioOrder(4).build();
    }

    @Test
    void dirtyBitsSurviveWhenFolioStateIsCreatedLateForADirtyFolio() throws Exception {
        IomapCache cache = cache(options());
        SparseTestOps ops = new SparseTestOps(KIB);
        OpenFile file = cache.addInode(1, KIB, 0, MAX, ops, ops).open();
        byte[] whole = pattern(1, 0, 16 * KIB);
        file.write(0, ByteBuffer.wrap(whole));
        Folio folio = cache.inode(1).pageCache().lookup(0);
        assertThat(folio.size()).isEqualTo(16 * KIB);
        assertThat(folio.state()).isNull();

        // A partial write now creates the state; it must inherit "every block dirty".
        file.write(5 * KIB + 10, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertThat(folio.state()).isNotNull();
        file.fsync();

        byte[] expected = whole.clone();
        expected[5 * KIB + 10] = 1;
        expected[5 * KIB + 11] = 2;
        expected[5 * KIB + 12] = 3;
        assertThat(readDevice(device, 0, 16 * KIB)).isEqualTo(expected);
        assertThat(device.stats().dataBytesWritten()).isEqualTo(16 * KIB);
    }

    @Test
    void wholeFolioWriteAllocatesNoFolioState() throws Exception {
        IomapCache cache = cache(options());
        SparseTestOps ops = new SparseTestOps(KIB);
        OpenFile file = cache.addInode(1, KIB, 0, MAX, ops, ops).open();

        file.write(0, buffer(2, 0, 64 * KIB));

        assertThat(cache.stats().folioStatesAllocated()).isZero();
        assertThat(cache.inode(1).pageCache().lookup(0).state()).isNull();
        assertThat(cache.inode(1).pageCache().lookup(0).isUptodate()).isTrue();
    }

    @Test
    void partialWriteAllocatesFolioStateOnce() throws Exception {
        IomapCache cache = cache(options());
        SparseTestOps ops = new SparseTestOps(KIB);
        OpenFile file = cache.addInode(1, KIB, 0, MAX, ops, ops).open();

        file.write(0, buffer(2, 0, 2 * KIB));
        file.write(2 * KIB, buffer(2, 2 * KIB, 2 * KIB));

        assertThat(cache.stats().folioStatesAllocated()).isEqualTo(1);
    }

    @Test
    void partialBlockWriteIntoANewBlockNeverExposesStaleData() throws Exception {
        IomapCache cache = cache(options().toBuilder().poisonNewFolios(true).maxFolioOrder(0).build());
        SparseTestOps ops = new SparseTestOps(KIB);
        OpenFile file = cache.addInode(1, KIB, 0, MAX, ops, ops).open();
        file.write(8191, ByteBuffer.wrap(new byte[] {9}));

        // 100 bytes into the middle of new block 0, but the copy faults after 50: the 50 are written, and
        // the rest of the block around them reads as zeroes, never as the folio's poison.
        long written = file.write(10, TestIo.shortSource(pattern(3, 10, 100), 50), 100);

        assertThat(written).isEqualTo(50);
        assertThat(ops.isAllocated(0)).isTrue();
        byte[] expected = new byte[4096];
        System.arraycopy(pattern(3, 10, 100), 0, expected, 10, 50);
        assertThat(read(file, 0, 4096)).isEqualTo(expected);
        file.fsync();
        assertThat(readDevice(device, 0, KIB)).isEqualTo(Arrays.copyOf(expected, KIB));
    }

    @Test
    void partialBlockWriteIntoANewBlockZeroesInsteadOfReading() throws Exception {
        IomapCache cache = cache(options().toBuilder().poisonNewFolios(true).build());
        SparseTestOps ops = new SparseTestOps(KIB);
        OpenFile file = cache.addInode(1, KIB, 0, MAX, ops, ops).open();

        file.write(100, buffer(4, 100, 200));

        byte[] expected = new byte[KIB];
        System.arraycopy(pattern(4, 100, 200), 0, expected, 100, 200);
        assertThat(device.stats().reads()).isZero();
        assertThat(read(file, 0, 300)).isEqualTo(Arrays.copyOf(expected, 300));
        file.fsync();
        assertThat(readDevice(device, 0, KIB)).isEqualTo(expected);
    }

    /**
     * A short copy into a folio that is not uptodate: write_end refuses it (a block half copied would be
     * uptodate with bytes never written), then the bytes copied are written again alone, their partial
     * edge block read first, and kept (the kernel's {@code iomap_write_iter}).
     */
    @Test
    void shortCopyIntoANonUptodateFolioIsWrittenAgainOverWhatItCopied() throws Exception {
        IomapCache cache = cache(options());
        OpenFile file = cache.openBlockDevice();
        byte[] old = pattern(4, 4096, 4096);
        device.write(4096, ByteBuffer.wrap(old), dev.iomap.device.IoPurpose.DATA).join();
        byte[] data = pattern(5, 0, 2000);

        long written = file.write(4096 + 100, TestIo.shortSource(data, 1000), 2000);

        assertThat(written).isEqualTo(1000);
        byte[] expected = old.clone();
        System.arraycopy(data, 0, expected, 100, 1000);
        assertThat(read(file, 4096, 4096)).isEqualTo(expected);
        file.fsync();
        assertThat(readDevice(device, 4096, 4096)).isEqualTo(expected);
        // The copied range [4196, 5196) touches blocks 4 and 5.
        assertThat(device.stats().dataBytesWritten()).isEqualTo(4096 + 2 * KIB);
    }

    @Test
    void shortCopyIntoAnUptodateFolioKeepsWhatWasCopied() throws Exception {
        IomapCache cache = cache(options().toBuilder().maxFolioOrder(0).build());
        OpenFile file = cache.openBlockDevice();
        read(file, 0, 4096);

        long written = file.write(100, TestIo.shortSource(pattern(6, 100, 2000), 1000), 2000);

        assertThat(written).isEqualTo(1000);
        file.fsync();
        assertThat(Arrays.copyOfRange(readDevice(device, 0, 4096), 100, 1100))
                .isEqualTo(Arrays.copyOf(pattern(6, 100, 2000), 1000));
        // The copied range [100, 1100) touches blocks 0 and 1.
        assertThat(device.stats().dataBytesWritten()).isEqualTo(2 * KIB);
    }

    @Test
    void noDeviceReadWhenAWriteCoversWholeBlocks() throws Exception {
        IomapCache cache = cache(options());
        OpenFile file = cache.openBlockDevice();

        file.write(3 * KIB, buffer(7, 3 * KIB, 5 * KIB));

        assertThat(device.stats().reads()).isZero();
    }

    @Test
    void partialBlockOverwriteReadsOnlyTheEdgeBlocks() throws Exception {
        IomapCache cache = cache(options());
        OpenFile file = cache.openBlockDevice();

        file.write(KIB + 1, buffer(8, KIB + 1, 3 * KIB));

        assertThat(device.stats().reads()).isEqualTo(2);
        assertThat(device.stats().bytesRead()).isEqualTo(2 * KIB);
    }

    @Test
    void sizeGrowsWithTheWriteAndEndIsToldTheBytesWritten() throws Exception {
        IomapCache cache = cache(options());
        SparseTestOps real = new SparseTestOps(KIB);
        IomapOps ops = spy(real);
        CachedInode inode = cache.addInode(1, KIB, 0, MAX, ops, real);

        inode.open().write(500, buffer(9, 500, 3000));

        assertThat(inode.size()).isEqualTo(3500);
        verify(ops).end(eq(inode), eq(500L), eq(3000L), eq(3000L), eq(EnumSet.of(IomapRequest.WRITE)),
                any(Iomap.class));
    }

    @Test
    void aStaleMappingIsLookedUpAgainFromTheCurrentPosition() throws Exception {
        IomapCache cache = cache(options());
        IomapOps ops = OpsMocks.iomapOps();
        dev.iomap.spi.WriteOps writeOps = mock(dev.iomap.spi.WriteOps.class);
        when(ops.writeOps()).thenReturn(writeOps);
        when(ops.begin(any(), anyLong(), anyLong(), any()))
                .thenAnswer(call -> IomapMapping.of(Iomap.mapped(0, 1 << 20, 0)));
        when(writeOps.valid(any(), any())).thenReturn(false, true);
        CachedInode inode = cache.addInode(1, KIB, 0, MAX, ops, OpsMocks.writebackOps());

        long written = inode.open().write(0, buffer(10, 0, 2 * KIB));

        assertThat(written).isEqualTo(2 * KIB);
        InOrder order = inOrder(ops);
        order.verify(ops).begin(eq(inode), eq(0L), eq(2L * KIB), any());
        order.verify(ops).end(eq(inode), eq(0L), eq(2L * KIB), eq(0L), any(), any());
        order.verify(ops).begin(eq(inode), eq(0L), eq(2L * KIB), any());
        order.verify(ops).end(eq(inode), eq(0L), eq(2L * KIB), eq(2L * KIB), any(), any());
        verify(writeOps, times(2)).valid(any(IomapInode.class), any(Iomap.class));
    }

    @Test
    void writeOpsHooksSeeEveryFolio() throws Exception {
        IomapCache cache = cache(options().toBuilder().maxFolioOrder(0).build());
        dev.iomap.spi.WriteOps hooks = mock(dev.iomap.spi.WriteOps.class);
        when(hooks.valid(any(), any())).thenReturn(true);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        IomapOps ops = spy(mapping);
        when(ops.writeOps()).thenReturn(hooks);
        CachedInode inode = cache.addInode(1, KIB, 0, MAX, ops, mapping);

        inode.open().write(4000, buffer(11, 4000, 200));

        verify(hooks).getFolio(eq(inode), eq(4000L), eq(96), any());
        verify(hooks).getFolio(eq(inode), eq(4096L), eq(104), any());
        verify(hooks).putFolio(eq(inode), eq(4000L), eq(96), any(), any());
        verify(hooks).putFolio(eq(inode), eq(4096L), eq(104), any(), any());
    }

    @Test
    void negativeOffsetsAndOverflowAreRefused() {
        IomapCache cache = cache(options());
        OpenFile file = cache.openBlockDevice();

        assertThatThrownBy(() -> file.write(-1, ByteBuffer.wrap(new byte[1])))
                .isInstanceOf(InvalidRangeException.class).hasMessageContaining("negative offset -1");
        assertThatThrownBy(() -> file.write(device.capacity() - 1, ByteBuffer.wrap(new byte[2])))
                .isInstanceOf(InvalidRangeException.class).hasMessageContaining("ends past the limit");
        assertThatThrownBy(() -> file.read(-5, java.nio.ByteBuffer.allocate(1)))
                .isInstanceOf(InvalidRangeException.class);
    }
}
