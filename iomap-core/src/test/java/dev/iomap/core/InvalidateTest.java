package dev.iomap.core;

import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.iomap.core.mm.Folio;
import dev.iomap.spi.Iomap;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.spi.WritebackOps;
import dev.iomap.devices.RamBlockDevice;
import org.junit.jupiter.api.Test;
import org.mockito.Mockito;

class InvalidateTest {
    private static final int K4 = 4096;
    private static final int FOLIO = 65536;

    private final RamBlockDevice device = new RamBlockDevice(K4, 16L << 20);

    private static MapBlocksWriteback identity() throws Exception {
        MapBlocksWriteback ops = OpsMocks.writebackOps();
        when(ops.mapBlocks(any(), anyLong(), anyLong())).thenAnswer(call -> Iomap.mapped(
                call.<Long>getArgument(1), call.<Long>getArgument(2), call.<Long>getArgument(1)));
        return ops;
    }

    private CachedInode dirtyFolio(MapBlocksWriteback writeback) throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.builder().pageSize(FOLIO).maxFolioOrder(0).build(), device);
        CachedInode inode = cache.addInode(1, K4, 0, 1L << 30, new BlockDeviceMapping(device), writeback);
        inode.open().write(0, buffer(1, 0, FOLIO - 1));   // one short of whole: state, all dirty
        return inode;
    }

    @Test
    void partialInvalidationKeepsTheSurvivingDirtyBlocks() throws Exception {
        MapBlocksWriteback writeback = identity();
        CachedInode inode = dirtyFolio(writeback);
        Folio folio = inode.pageCache().lookup(0);

        folio.lock();
        Invalidate.invalidateFolio(folio, K4 + 100, 3 * K4);   // covers blocks 2 and 3 only
        folio.unlock();
        inode.open().fsync();

        verify(writeback).mapBlocks(inode, 0, 2 * K4);
        verify(writeback).mapBlocks(inode, 4 * K4, 12 * K4);
        verify(writeback, Mockito.times(2)).mapBlocks(any(), anyLong(), anyLong());
    }

    @Test
    void fullInvalidationCancelsDirtyAndDropsTheState() throws Exception {
        MapBlocksWriteback writeback = identity();
        CachedInode inode = dirtyFolio(writeback);
        Folio folio = inode.pageCache().lookup(0);

        folio.lock();
        Invalidate.invalidateFolio(folio, 0, FOLIO);
        folio.unlock();

        assertThat(folio.isDirty()).isFalse();
        assertThat(folio.state()).isNull();
        assertThat(inode.pageCache().hasDirty()).isFalse();
    }

    @Test
    void releaseIsRefusedWhileTheFolioIsDirty() throws Exception {
        CachedInode inode = dirtyFolio(identity());
        Folio folio = inode.pageCache().lookup(0);

        folio.lock();
        boolean dirtyReleased = Invalidate.releaseFolio(folio);
        folio.unlock();
        inode.open().fsync();
        folio.lock();
        boolean cleanReleased = Invalidate.releaseFolio(folio);
        folio.unlock();

        assertThat(dirtyReleased).isFalse();
        assertThat(cleanReleased).isTrue();
        assertThat(folio.state()).isNull();
    }

    @Test
    void releaseIsRefusedUnderWriteback() throws Exception {
        CachedInode inode = dirtyFolio(identity());
        Folio folio = inode.pageCache().lookup(0);
        inode.open().fsync();

        folio.lock();
        folio.clearDirtyAndStartWriteback();
        boolean released = Invalidate.releaseFolio(folio);
        folio.finishWriteback(1);
        folio.unlock();

        assertThat(released).isFalse();
    }

    @Test
    void flushAndInvalidateWritesBackThenDropsWholeFolios() throws Exception {
        MapBlocksWriteback writeback = identity();
        IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(0).build(), device);
        CachedInode inode = cache.addInode(1, K4, 0, 1L << 30, new BlockDeviceMapping(device), writeback);
        inode.open().write(0, buffer(2, 0, 4 * K4));
        clearInvocations(writeback);

        inode.flushAndInvalidate(K4, 3 * K4);

        assertThat(inode.pageCache().lookup(1)).isNull();
        assertThat(inode.pageCache().lookup(2)).isNull();
        assertThat(inode.pageCache().lookup(0)).isNotNull();
        assertThat(TestIo.readDevice(device, K4, 2 * K4))
                .isEqualTo(java.util.Arrays.copyOfRange(pattern(2, 0, 4 * K4), K4, 3 * K4));
    }
}
