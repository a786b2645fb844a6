package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import dev.iomap.core.mm.Folio;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapType;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.spi.WriteOps;
import dev.iomap.spi.WritebackOps;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BufferedReadTest {
    private static final int K1 = 1024;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K1, 16L << 20);

    private static PageCacheOptions poisoned() {
        return PageCacheOptions.builder().poisonNewFolios(true).maxFolioOrder(0).build();
    }

    private void fillDevice(long offset, byte[] bytes) throws Exception {
        device.write(offset, ByteBuffer.wrap(bytes), dev.iomap.device.IoPurpose.DATA).join();
    }

    /** An adapter whose file is: block 0 mapped at device 8 KiB, block 1 a hole, block 2 unwritten,
     * block 3 mapped but NEW; the file is 3.5 KiB long. */
    private CachedInode mixedFile(IomapCache cache) throws Exception {
        IomapOps ops = OpsMocks.iomapOps();
        when(ops.writeOps()).thenReturn(WriteOps.NONE);
        when(ops.begin(any(), anyLong(), anyLong(), any())).thenAnswer(call -> {
            long block = call.<Long>getArgument(1) / K1;
            Iomap iomap = switch ((int) block) {
                case 0 -> Iomap.mapped(0, K1, 8 * K1);
                case 1 -> Iomap.hole(K1, K1);
                case 2 -> new Iomap(2 * K1, K1, IomapType.UNWRITTEN, Set.of(), 12 * K1, null, 0);
                default -> new Iomap(block * K1, K1, IomapType.MAPPED, EnumSet.of(IomapFlag.NEW),
                        (block + 10) * K1, null, 0);
            };
            return IomapMapping.of(iomap);
        });
        return cache.addInode(1, K1, 3 * K1 + 512, MAX, ops, OpsMocks.writebackOps());
    }

    @Test
    void holesUnwrittenAndNewBlocksReadAsZeroesAndMappedBlocksFromTheDevice() throws Exception {
        fillDevice(8 * K1, pattern(1, 0, K1));
        fillDevice(11 * K1, pattern(2, 0, 4 * K1));
        IomapCache cache = new IomapCache(poisoned(), device);
        OpenFile file = mixedFile(cache).open();

        byte[] bytes = read(file, 0, 8 * K1);

        byte[] expected = new byte[3 * K1 + 512];
        System.arraycopy(pattern(1, 0, K1), 0, expected, 0, K1);
        assertThat(bytes).isEqualTo(expected);
        assertThat(device.stats().reads()).isEqualTo(1);
        assertThat(device.stats().bytesRead()).isEqualTo(K1);
    }

    @Test
    void bytesPastEofInTheLastFolioAreZero() throws Exception {
        IomapCache cache = new IomapCache(poisoned(), device);
        CachedInode inode = mixedFile(cache);
        read(inode.open(), 0, 10);

        Folio folio = inode.pageCache().lookup(0);
        byte[] tail = new byte[4096 - (3 * K1 + 512)];
        java.lang.foreign.MemorySegment.copy(folio.memory(), java.lang.foreign.ValueLayout.JAVA_BYTE,
                3 * K1 + 512, tail, 0, tail.length);
        assertThat(folio.isUptodate()).isTrue();
        assertThat(tail).isEqualTo(new byte[tail.length]);
    }

    @Test
    void readAtOrPastEofReturnsMinusOne() throws Exception {
        IomapCache cache = new IomapCache(poisoned(), device);
        OpenFile file = mixedFile(cache).open();

        assertThat(file.read(3 * K1 + 512, ByteBuffer.allocate(10))).isEqualTo(-1);
        assertThat(file.read(1 << 20, ByteBuffer.allocate(10))).isEqualTo(-1);
        assertThat(file.read(0, ByteBuffer.allocate(0))).isZero();
    }

    @Test
    void aPartiallyUptodateFolioReadsOnlyItsMissingBlocks() throws Exception {
        fillDevice(0, pattern(3, 0, 4 * K1));
        IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(0).build(), device);
        OpenFile file = cache.openBlockDevice();
        file.write(K1, buffer(4, 0, 2 * K1));
        assertThat(device.stats().reads()).isZero();

        byte[] bytes = read(file, 0, 4 * K1);

        byte[] expected = pattern(3, 0, 4 * K1);
        System.arraycopy(pattern(4, 0, 2 * K1), 0, expected, K1, 2 * K1);
        assertThat(bytes).isEqualTo(expected);
        assertThat(device.stats().reads()).isEqualTo(2);
        assertThat(device.stats().bytesRead()).isEqualTo(2 * K1);
    }

    @Test
    void readingUptodateBytesOfAPartlyUptodateFolioTouchesNoDevice() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(0).build(), device);
        OpenFile file = cache.openBlockDevice();
        file.write(K1, buffer(5, 0, 2 * K1));

        assertThat(read(file, K1, 2 * K1)).isEqualTo(pattern(5, 0, 2 * K1));
        assertThat(device.stats().reads()).isZero();
    }

    @Test
    void inlineDataIsCopiedAndTheRestZeroed() throws Exception {
        byte[] inline = pattern(6, 0, 300);
        IomapOps ops = OpsMocks.iomapOps();
        when(ops.begin(any(), anyLong(), anyLong(), any())).thenAnswer(call -> {
            long pos = call.<Long>getArgument(1);
            return IomapMapping.of(pos < 300
                    ? new Iomap(0, 300, IomapType.INLINE, Set.of(), Iomap.NULL_ADDR, inline, 0)
                    : Iomap.hole(pos & -K1, K1));
        });
        IomapCache cache = new IomapCache(poisoned(), device);
        OpenFile file = cache.addInode(1, K1, 300, MAX, ops, OpsMocks.writebackOps()).open();

        assertThat(read(file, 0, 1000)).isEqualTo(inline);
        Folio folio = file.inode().pageCache().lookup(0);
        assertThat(folio.memory().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 300)).isZero();
        assertThat(folio.memory().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4095)).isZero();
        assertThat(device.stats().reads()).isZero();
    }

    @Test
    void largeReadsCreateLargeFolios() throws Exception {
        // readahead off: its window would add a folio past the read (ReadaheadTest counts those)
        IomapCache cache = new IomapCache(PageCacheOptions.builder().maxReadaheadBytes(0).build(), device);
        OpenFile file = cache.openBlockDevice();

        byte[] bytes = read(file, 0, 256 * K1);

        assertThat(bytes).hasSize(256 * K1);
        assertThat(cache.stats().foliosByOrder()[6]).isEqualTo(1);
        assertThat(Arrays.stream(cache.stats().foliosByOrder()).sum()).isEqualTo(1);
    }
}
