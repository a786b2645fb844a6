package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.IomapException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.WritebackException;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WritebackOps;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code INLINE} mappings the core refuses, as the kernel WARNs and fails with {@code -EIO}: not
 * at offset 0, crossing the first page, short of EOF, or paired with a separate source. Each refusal
 * is an {@link IomapException} naming the problem, and the adapter's {@code end} still runs (with
 * nothing written) so it can release the mapping.
 */
class InlineRefusalTest {
    private static final int K1 = 1024;

    private final RamBlockDevice device = new RamBlockDevice(K1, 16L << 20);
    private final IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
    private final List<Long> endWritten = new ArrayList<>();

    @AfterEach
    void closeCache() {
        cache.close();
    }

    private static Iomap inline(long offset, int length) {
        return new Iomap(offset, length, IomapType.INLINE, Set.of(), Iomap.NULL_ADDR, new byte[length], 0);
    }

    private CachedInode file(long size, IomapMapping mapping) {
        return file(1, K1, size, mapping);
    }

    private CachedInode file(long ino, int blockSize, long size, IomapMapping mapping) {
        IomapOps ops = new IomapOps() {
            @Override
            public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request) {
                return mapping;
            }

            @Override
            public void end(IomapInode inode, long pos, long length, long written, Set<IomapRequest> request,
                    Iomap iomap) {
                endWritten.add(written);
            }
        };
        MapBlocksWriteback writeback = (inode, pos, length) -> {
            throw new IllegalStateException("no writeback expected");
        };
        return cache.addInode(ino, blockSize, size, 1L << 30, ops, writeback);
    }

    @Test
    void inlineDataNotAtOffsetZeroIsRefused() {
        CachedInode inode = file(2 * K1, IomapMapping.of(inline(K1, K1)));

        assertThatThrownBy(() -> inode.open().write(K1, ByteBuffer.wrap(new byte[] {1})))
                .isInstanceOf(IomapException.class)
                .hasMessageContaining("inline data must start at file offset 0");
        assertThat(endWritten).containsExactly(0L);
    }

    @Test
    void inlineDataCrossingTheFirstPageIsRefused() {
        CachedInode inode = file(100, IomapMapping.of(inline(0, 4096 + K1)));

        assertThatThrownBy(() -> inode.open().read(0, ByteBuffer.allocate(10)))
                .isInstanceOf(IomapException.class)
                .hasMessageContaining("inline data must lie within the first page (4096 bytes)");
        assertThat(endWritten).containsExactly(0L);
    }

    @Test
    void inlineDataMayFillABlockLargerThanThePageButNotCrossIt() throws Exception {
        // the whole first block inline, 16244 bytes of it inside EOF (gfs2's stuffed dinode)
        byte[] data = dev.iomap.testkit.TestData.pattern(3, 0, 16384);
        Iomap stuffed = new Iomap(0, data.length, IomapType.INLINE, Set.of(), Iomap.NULL_ADDR, data, 0);
        CachedInode inode = file(2, 16384, 16244, IomapMapping.of(stuffed));
        CachedInode crossing = file(3, 16384, 100, IomapMapping.of(inline(0, 16384 + 1)));

        assertThat(TestIo.read(inode.open(), 0, 16244)).isEqualTo(java.util.Arrays.copyOf(data, 16244));
        assertThat(inode.pageCache().lookup(0).size()).isEqualTo(16384);
        assertThatThrownBy(() -> crossing.open().read(0, ByteBuffer.allocate(10)))
                .isInstanceOf(IomapException.class)
                .hasMessageContaining("inline data must lie within the first block (16384 bytes");
    }

    @Test
    void inlineDataShortOfEofIsRefused() {
        CachedInode inode = file(3000, IomapMapping.of(inline(0, 2 * K1)));

        assertThatThrownBy(() -> inode.open().read(0, ByteBuffer.allocate(10)))
                .isInstanceOf(IomapException.class)
                .hasMessageContaining("inline data must reach EOF (size 3000)");
    }

    @Test
    void inlineDataWithASeparateSourceIsRefusedBothWays() {
        CachedInode inlineOverMapped = file(100, new IomapMapping(inline(0, K1), Iomap.mapped(0, K1, 0)));
        assertThatThrownBy(() -> inlineOverMapped.open().write(0, ByteBuffer.wrap(new byte[] {1})))
                .isInstanceOf(IomapException.class)
                .hasMessageContaining("must be its own read source");
        cache.removeInode(1);

        CachedInode mappedOverInline = file(100, new IomapMapping(Iomap.mapped(0, K1, 0), inline(0, K1)));
        assertThatThrownBy(() -> mappedOverInline.open().write(0, ByteBuffer.wrap(new byte[] {1})))
                .isInstanceOf(IomapException.class)
                .hasMessageContaining("must be its own read source");
        assertThat(device.stats().writes()).isZero();
    }

    @Test
    void inlineDataShorterThanTheMappingIsRejectedWhenTheMappingIsMade() {
        assertThatThrownBy(() -> new Iomap(0, 100, IomapType.INLINE, Set.of(), Iomap.NULL_ADDR, new byte[99], 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("INLINE iomap of 100 bytes has only 99 bytes of inline data");
    }

    @Test
    void writebackRefusesAnInlineMappingAndWritesNothing() throws Exception {
        Iomap inline = inline(0, K1);
        IomapOps ops = (inode, pos, length, request) -> IomapMapping.of(pos < K1 ? inline : Iomap.hole(pos, length));
        MapBlocksWriteback writeback = (inode, pos, length) -> inline;
        CachedInode inode = cache.addInode(1, K1, 100, 1L << 30, ops, writeback);
        OpenFile file = inode.open();
        file.read(0, ByteBuffer.allocate(100));
        assertThat(inode.dirtyFolio(0)).isTrue();   // only an outside caller can dirty inline data

        assertThatThrownBy(file::fsync)
                .isInstanceOf(WritebackException.class)
                .hasMessageContaining("inline data is written through at write time, never written back");
        assertThat(device.stats().writes()).isZero();
    }
}
