package dev.iomap.core;

import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoMoreInteractions;
import static org.mockito.Mockito.when;

import dev.iomap.core.mm.Folio;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.WritebackException;
import dev.iomap.spi.WritebackOps;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import dev.iomap.devices.RamBlockDevice;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;

class WritebackTest {
    private static final int K4 = 4096;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K4, 64L << 20);

    /** 64 KiB pages, single-page folios, 4 KiB blocks: 16 blocks per folio. */
    private IomapCache cache64k(boolean perBlockDirty) {
        return new IomapCache(PageCacheOptions.builder().pageSize(65536).maxFolioOrder(0)
                .perBlockDirty(perBlockDirty).build(), device);
    }

    private static MapBlocksWriteback identityWriteback() {
        MapBlocksWriteback ops = OpsMocks.writebackOps();
        try {
            when(ops.mapBlocks(any(), anyLong(), anyLong()))
                    .thenAnswer(call -> Iomap.mapped(call.<Long>getArgument(1), call.<Long>getArgument(2),
                            call.<Long>getArgument(1)));
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        return ops;
    }

    @Test
    void mapBlocksIsCalledOnlyForDirtyRuns() throws Exception {
        IomapCache cache = cache64k(true);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        MapBlocksWriteback writeback = identityWriteback();
        CachedInode inode = cache.addInode(1, K4, 0, MAX, mapping, writeback);
        OpenFile file = inode.open();
        file.write(0, ByteBuffer.wrap(new byte[65536 * 2]));
        file.fsync();
        org.mockito.Mockito.clearInvocations(writeback);

        file.write(K4, buffer(1, K4, 2 * K4));        // blocks 1-2
        file.write(5 * K4 + 7, buffer(1, 5 * K4 + 7, 3)); // block 5
        file.write(65536 + 15 * K4, buffer(1, 0, K4));   // folio 1, block 15
        file.fsync();

        verify(writeback).writebackRange(any(), eq((long) K4), eq(2L * K4), eq(65536L));
        verify(writeback).writebackRange(any(), eq(5L * K4), eq((long) K4), eq(65536L));
        verify(writeback).writebackRange(any(), eq(65536L + 15 * K4), eq((long) K4), eq(2 * 65536L));
        verify(writeback).mapBlocks(inode, K4, 2 * K4);
        verify(writeback).mapBlocks(inode, 5 * K4, K4);
        verify(writeback).mapBlocks(inode, 65536 + 15 * K4, K4);
        verify(writeback, org.mockito.Mockito.times(3)).writebackSubmit(eq(inode), any());
        // the RAM device completes at once, so each ioend is asked first (the mock says: work to do)
        verify(writeback, org.mockito.Mockito.times(3)).completesWithoutWork(eq(inode), any());
        verify(writeback, org.mockito.Mockito.times(3)).ioendCompleted(eq(inode), any());
        verify(writeback).writesInFileOrder(inode);
        verifyNoMoreInteractions(writeback);
    }

    @Test
    void aWholeFolioWriteIsWrittenBackWithoutAFolioState() throws Exception {
        IomapCache cache = cache64k(true);
        MapBlocksWriteback writeback = identityWriteback();
        CachedInode inode = cache.addInode(1, K4, 0, MAX, new BlockDeviceMapping(device), writeback);
        OpenFile file = inode.open();

        file.write(0, buffer(3, 0, 2 * 65536));
        file.fsync();

        assertThat(cache.stats().folioStatesAllocated()).isZero();
        assertThat(inode.pageCache().lookup(0).state()).isNull();
        verify(writeback).mapBlocks(inode, 0, 65536);
        verify(writeback).mapBlocks(inode, 65536, 65536);
        assertThat(cache.stats().ioends()).isEqualTo(1);
        assertThat(readDevice(device, 0, 2 * 65536)).isEqualTo(pattern(3, 0, 2 * 65536));

        // a later partial write makes the state then, clean and uptodate, and writes only its block
        long writesBefore = device.stats().bytesWritten();
        file.write(K4, buffer(4, K4, 10));
        file.fsync();
        assertThat(cache.stats().folioStatesAllocated()).isEqualTo(1);
        assertThat(device.stats().bytesWritten() - writesBefore).isEqualTo(K4);
        byte[] expected = pattern(3, 0, 2 * 65536);
        System.arraycopy(pattern(4, K4, 10), 0, expected, K4, 10);
        assertThat(readDevice(device, 0, 2 * 65536)).isEqualTo(expected);
    }

    @Test
    void adjacentDirtyRunsMergeIntoOneIoend() throws Exception {
        IomapCache cache = cache64k(true);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        MapBlocksWriteback writeback = identityWriteback();
        CachedInode inode = cache.addInode(1, K4, 0, MAX, mapping, writeback);
        OpenFile file = inode.open();
        file.write(0, ByteBuffer.wrap(new byte[65536 * 2]));
        file.fsync();
        org.mockito.Mockito.clearInvocations(writeback);
        long ioendsBefore = cache.stats().ioends();
        long writesBefore = device.stats().writes();

        // The last block of folio 0 and the first of folio 1: contiguous in file and on the device.
        file.write(65536 - K4, buffer(2, 65536 - K4, 2 * K4));
        file.fsync();

        ArgumentCaptor<IoendCompletion> done = ArgumentCaptor.forClass(IoendCompletion.class);
        verify(writeback).ioendCompleted(eq(inode), done.capture());
        assertThat(done.getValue().offset()).isEqualTo(65536 - K4);
        assertThat(done.getValue().length()).isEqualTo(2 * K4);
        assertThat(cache.stats().ioends() - ioendsBefore).isEqualTo(1);
        assertThat(device.stats().writes() - writesBefore).isEqualTo(1);
        assertThat(readDevice(device, 65536 - K4, 2 * K4)).isEqualTo(pattern(2, 65536 - K4, 2 * K4));
    }

    @Test
    void ioendsDoNotMergeAcrossTypesOrDeviceDiscontinuities() throws Exception {
        IomapCache cache = cache64k(true);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        MapBlocksWriteback writeback = OpsMocks.writebackOps();
        when(writeback.mapBlocks(any(), anyLong(), anyLong())).thenAnswer(call -> {
            long pos = call.<Long>getArgument(1);
            long block = pos / K4;
            // blocks 0-1 MAPPED at identity, block 2 UNWRITTEN, block 3 MAPPED far away
            if (block < 2) {
                return Iomap.mapped(0, 2 * K4, 0);
            }
            if (block == 2) {
                return new Iomap(2 * K4, K4, IomapType.UNWRITTEN, EnumSet.noneOf(IomapFlag.class), 2 * K4, null, 0);
            }
            return Iomap.mapped(3 * K4, K4, 40 * K4);
        });
        CachedInode inode = cache.addInode(1, K4, 0, MAX, mapping, writeback);
        OpenFile file = inode.open();

        file.write(0, buffer(3, 0, 4 * K4));
        file.fsync();

        List<IoendCompletion> ends = new ArrayList<>();
        ArgumentCaptor<IoendCompletion> done = ArgumentCaptor.forClass(IoendCompletion.class);
        verify(writeback, org.mockito.Mockito.times(3)).ioendCompleted(eq(inode), done.capture());
        ends.addAll(done.getAllValues());
        assertThat(ends).extracting(IoendCompletion::offset).containsExactly(0L, 2L * K4, 3L * K4);
        assertThat(ends).extracting(IoendCompletion::type)
                .containsExactly(IomapType.MAPPED, IomapType.UNWRITTEN, IomapType.MAPPED);
        assertThat(readDevice(device, 40 * K4, K4)).isEqualTo(java.util.Arrays.copyOfRange(
                pattern(3, 0, 4 * K4), 3 * K4, 4 * K4));
    }

    @Test
    void ioendsAreCappedAtTheConfiguredSize() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.builder().maxIoendBytes(64 * 1024).build(), device);
        OpenFile file = cache.openBlockDevice();

        file.write(0, buffer(4, 0, 256 * 1024));
        file.fsync();

        assertThat(cache.stats().ioends()).isEqualTo(4);
        assertThat(device.stats().dataBytesWritten()).isEqualTo(256 * 1024);
    }

    @Test
    void theTailPastEofIsZeroedAtWriteback() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        SparseTestOps ops = new SparseTestOps(K4);
        CachedInode inode = cache.addInode(1, K4, 0, MAX, ops, ops);
        OpenFile file = inode.open();
        file.write(0, buffer(5, 0, 100));
        // A store past EOF through a mapping of the last folio (what mmap allows).
        Folio folio = inode.pageCache().lookup(0);
        for (int i = 100; i < K4; i++) {
            folio.memory().set(ValueLayout.JAVA_BYTE, i, (byte) 0x55);
        }

        file.fsync();

        byte[] expected = new byte[K4];
        System.arraycopy(pattern(5, 0, 100), 0, expected, 0, 100);
        assertThat(readDevice(device, 0, K4)).isEqualTo(expected);
        assertThat(folio.memory().get(ValueLayout.JAVA_BYTE, 100)).isZero();
        assertThat(folio.memory().get(ValueLayout.JAVA_BYTE, K4 - 1)).isZero();
    }

    @Test
    void withoutPerBlockDirtyTheWholeUptodateFolioIsWritten() throws Exception {
        IomapCache cache = cache64k(false);
        OpenFile file = cache.openBlockDevice();
        TestIo.read(file, 0, 65536);

        file.write(7 * K4, buffer(6, 7 * K4, K4));
        file.fsync();

        assertThat(device.stats().dataBytesWritten()).isEqualTo(65536);
    }

    @Test
    void withPerBlockDirtyOnlyTheDirtyBlockIsWritten() throws Exception {
        IomapCache cache = cache64k(true);
        OpenFile file = cache.openBlockDevice();
        TestIo.read(file, 0, 65536);

        file.write(7 * K4, buffer(6, 7 * K4, K4));
        file.fsync();

        assertThat(device.stats().dataBytesWritten()).isEqualTo(K4);
        assertThat(readDevice(device, 7 * K4, K4)).isEqualTo(pattern(6, 7 * K4, K4));
    }

    @Test
    void aDeviceWriteErrorIsReportedOnceByTheNextFsyncOfEveryOpenFile() throws Exception {
        FaultInjectingDevice faulty = new FaultInjectingDevice(device);
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), faulty);
        OpenFile first = cache.openBlockDevice();
        OpenFile second = first.inode().open();
        faulty.inject(Fault.writes(0, K4));

        first.write(0, buffer(7, 0, K4));
        assertThatThrownBy(first::fsync).isInstanceOf(WritebackException.class)
                .hasMessageContaining("injected write error");
        assertThatCode(first::fsync).doesNotThrowAnyException();
        assertThatThrownBy(second::fsync).isInstanceOf(WritebackException.class);
        assertThatCode(second::fsync).doesNotThrowAnyException();
        OpenFile openedLater = first.inode().open();
        assertThatCode(openedLater::fsync).doesNotThrowAnyException();
        assertThat(faulty.injected()).hasSize(1);
    }

    @Test
    void aWritebackRangeFailureIsReportedAndTheFolioDiscarded() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        MapBlocksWriteback writeback = OpsMocks.writebackOps();
        when(writeback.mapBlocks(any(), anyLong(), anyLong()))
                .thenThrow(new dev.iomap.api.NoSpaceException("no blocks left"));
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        CachedInode inode = cache.addInode(1, K4, 0, MAX, mapping, writeback);
        OpenFile file = inode.open();

        file.write(0, buffer(8, 0, K4));

        assertThatThrownBy(file::fsync).isInstanceOf(WritebackException.class)
                .hasMessageContaining("no blocks left");
        verify(writeback).writebackRange(any(), eq(0L), eq((long) K4), eq((long) K4));
        verify(writeback, org.mockito.Mockito.never()).writebackSubmit(any(), any());
        assertThat(inode.pageCache().hasDirty()).isFalse();
    }

    @Test
    void theCompletionHookRunsBeforeTheFolioLeavesWriteback() throws Exception {
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        MapBlocksWriteback writeback = identityWriteback();
        CachedInode inode = cache.addInode(1, K4, 0, MAX, mapping, writeback);
        List<Boolean> underWriteback = new ArrayList<>();
        doAnswer(call -> {
            underWriteback.add(inode.pageCache().lookup(0).isWriteback());
            return null;
        }).when(writeback).ioendCompleted(any(), any());
        OpenFile file = inode.open();

        file.write(0, buffer(9, 0, K4));
        file.fsync();

        assertThat(underWriteback).containsExactly(true);
        assertThat(inode.pageCache().lookup(0).isWriteback()).isFalse();
    }
}
