package dev.iomap.core;

import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.IomapException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.WritebackException;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The 6.17 writeback contract between the core and an adapter's {@link WritebackOps#writebackRange}:
 * {@link WritebackContext#addToIoend} takes all of the mapped part of a dirty range (split over
 * ioends by the size limit), the core asks again for what a short mapping left, the pass's last
 * mapping is offered back for reuse, and every answer that does not match what was added (or an add
 * outside the range being written) fails the folio with an {@link IomapException} naming the breach.
 * 64 KiB single-page folios of 4 KiB blocks, per-block dirty tracking, identity device addresses.
 */
class WritebackRangeTest {
    private static final int K4 = 4096;
    private static final int FOLIO = 65536;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K4, 16L << 20);
    private IomapCache cache;

    @AfterEach
    void closeCache() {
        if (cache != null) {
            cache.close();
        }
    }

    private CachedInode file(long maxIoendBytes, WritebackOps writeback) {
        return file(PageCacheOptions.builder().pageSize(FOLIO).maxFolioOrder(0), maxIoendBytes, writeback);
    }

    private CachedInode file(PageCacheOptions.Builder options, long maxIoendBytes, WritebackOps writeback) {
        cache = new IomapCache(options.perBlockDirty(true).maxIoendBytes(maxIoendBytes).build(), device);
        return cache.addInode(1, K4, 0, MAX, new BlockDeviceMapping(device), writeback);
    }

    /** The range's call, recorded as "pos+length". */
    private static String call(long pos, long length) {
        return pos + "+" + length;
    }

    @Test
    void oneAddTakesARunLongerThanTheIoendLimitIntoSeveralIoends() throws Exception {
        List<String> calls = new ArrayList<>();
        // 4 KiB pages, one 64 KiB folio, ioends of at most 16 KiB.
        CachedInode inode = file(PageCacheOptions.builder().pageSize(K4).maxFolioOrder(4), 16 * 1024,
                (wpc, pos, length, endPos) -> {
                    calls.add(call(pos, length));
                    return wpc.addToIoend(Iomap.mapped(0, FOLIO, 0), pos, length);
                });
        inode.open().write(0, buffer(1, 0, FOLIO));
        assertThat(inode.pageCache().lookup(0).size()).as("one folio").isEqualTo(FOLIO);

        inode.open().fsync();

        assertThat(calls).containsExactly(call(0, FOLIO));
        assertThat(cache.stats().mapBlocksCalls()).isEqualTo(1);
        assertThat(cache.stats().ioends()).isEqualTo(4);
        assertThat(readDevice(device, 0, FOLIO)).isEqualTo(pattern(1, 0, FOLIO));
    }

    @Test
    void whatAShortMappingLeftIsAskedForAgain() throws Exception {
        List<String> calls = new ArrayList<>();
        // Two blocks per mapping; the one starting at block s lies at device block 100 + 2s, so that no
        // mapping continues the last one on the device.
        CachedInode inode = file(1 << 20, (wpc, pos, length, endPos) -> {
            calls.add(call(pos, length));
            long start = pos & -(2L * K4);
            return wpc.addToIoend(Iomap.mapped(start, 2 * K4, (100 + 2 * start / K4) * K4), pos, length);
        });
        inode.open().write(0, buffer(2, 0, 5 * K4));

        inode.open().fsync();

        assertThat(calls).containsExactly(call(0, 5 * K4), call(2 * K4, 3 * K4), call(4 * K4, K4));
        assertThat(cache.stats().ioends()).isEqualTo(3);
        byte[] data = pattern(2, 0, 5 * K4);
        assertThat(readDevice(device, 100L * K4, 2 * K4)).isEqualTo(java.util.Arrays.copyOfRange(data, 0, 2 * K4));
        assertThat(readDevice(device, 104L * K4, 2 * K4)).isEqualTo(java.util.Arrays.copyOfRange(data, 2 * K4, 4 * K4));
        assertThat(readDevice(device, 108L * K4, K4)).isEqualTo(java.util.Arrays.copyOfRange(data, 4 * K4, 5 * K4));
    }

    @Test
    void thePassOffersItsLastMappingForTheNextRange() throws Exception {
        List<String> mapped = new ArrayList<>();
        CachedInode inode = file(1 << 20, (wpc, pos, length, endPos) -> {
            Iomap cached = wpc.iomap();
            if (cached == null || !cached.contains(pos)) {
                mapped.add(call(pos, length));
                cached = Iomap.mapped(0, FOLIO, 0);
            }
            return wpc.addToIoend(cached, pos, length);
        });
        inode.open().write(0, buffer(3, 0, 6 * K4));
        inode.open().fsync();
        mapped.clear();
        long rangesBefore = cache.stats().mapBlocksCalls();

        inode.open().write(K4, buffer(3, K4, K4));
        inode.open().write(5 * K4, buffer(3, 5 * K4, K4));
        inode.open().fsync();

        assertThat(mapped).as("a new pass maps once, then reuses").containsExactly(call(K4, K4));
        assertThat(cache.stats().mapBlocksCalls() - rangesBefore).isEqualTo(2);
        assertThat(readDevice(device, K4, K4)).isEqualTo(pattern(3, K4, K4));
        assertThat(readDevice(device, 5 * K4, K4)).isEqualTo(pattern(3, 5 * K4, K4));
    }

    @Test
    void anAnswerThatIsNotWhatWasAddedFailsTheFolio() throws Exception {
        CachedInode inode = file(1 << 20, (wpc, pos, length, endPos) -> {
            wpc.addToIoend(Iomap.mapped(0, FOLIO, 0), pos, K4);
            return length;
        });
        inode.open().write(0, buffer(4, 0, 2 * K4));

        assertThatThrownBy(() -> inode.open().fsync()).isInstanceOf(WritebackException.class)
                .hasCauseInstanceOf(IomapException.class)
                .hasMessageContaining("returned 8192 after adding 4096 bytes")
                .hasMessageContaining("return what addToIoend returned");
        assertThat(inode.pageCache().hasDirty()).isFalse();
        assertThat(readDevice(device, 0, K4)).as("what was added is written").isEqualTo(pattern(4, 0, K4));
        assertThat(readDevice(device, K4, K4)).isEqualTo(new byte[K4]);
    }

    @Test
    void aRangeNobodyAddedFailsTheFolio() throws Exception {
        CachedInode inode = file(1 << 20, (wpc, pos, length, endPos) -> length);
        inode.open().write(0, buffer(5, 0, K4));

        assertThatThrownBy(() -> inode.open().fsync()).isInstanceOf(WritebackException.class)
                .hasCauseInstanceOf(IomapException.class)
                .hasMessageContaining("after adding 0 bytes");
        assertThat(cache.stats().ioends()).isZero();
        assertThat(readDevice(device, 0, K4)).isEqualTo(new byte[K4]);
    }

    @Test
    void anAddPastTheRangesNextByteIsRefused() throws Exception {
        CachedInode inode = file(1 << 20,
                (wpc, pos, length, endPos) -> wpc.addToIoend(Iomap.mapped(0, FOLIO, 0), pos + K4, length - K4));
        inode.open().write(0, buffer(6, 0, 2 * K4));

        assertThatThrownBy(() -> inode.open().fsync()).isInstanceOf(WritebackException.class)
                .hasCauseInstanceOf(IomapException.class)
                .hasMessageContaining("addToIoend of inode 1 at 4096")
                .hasMessageContaining("from its next byte (0 is)");
        assertThat(cache.stats().ioends()).isZero();
    }

    @Test
    void anAddOutsideWritebackRangeIsRefused() throws Exception {
        List<WritebackContext> passes = new ArrayList<>();
        CachedInode inode = file(1 << 20, (wpc, pos, length, endPos) -> {
            passes.add(wpc);
            return wpc.addToIoend(Iomap.mapped(0, FOLIO, 0), pos, length);
        });
        inode.open().write(0, buffer(7, 0, K4));
        inode.open().fsync();

        assertThat(passes).hasSize(1);
        assertThatThrownBy(() -> passes.get(0).addToIoend(Iomap.mapped(0, FOLIO, 0), 0, K4))
                .isInstanceOf(IomapException.class)
                .hasMessageContaining("(none is), during writebackRange");
        assertThat(passes.get(0).inode()).isSameAs(inode);
        assertThat(passes.get(0).iomap()).isEqualTo(Iomap.mapped(0, FOLIO, 0));
    }

    @Test
    void aFailingRangeLeavesWhatEarlierCallsAddedToBeWritten() throws Exception {
        List<String> calls = new ArrayList<>();
        CachedInode inode = file(1 << 20, (wpc, pos, length, endPos) -> {
            calls.add(call(pos, length) + " to " + endPos);
            if (pos >= 2 * K4) {
                throw new IOException("no blocks for " + pos);
            }
            return wpc.addToIoend(Iomap.mapped(0, 2 * K4, 0), pos, length);
        });
        inode.open().write(0, buffer(8, 0, 3 * K4));

        assertThatThrownBy(() -> inode.open().fsync()).isInstanceOf(WritebackException.class)
                .hasMessageContaining("no blocks for 8192");

        assertThat(calls).containsExactly(call(0, 3 * K4) + " to " + 3 * K4, call(2 * K4, K4) + " to " + 3 * K4);
        assertThat(readDevice(device, 0, 2 * K4)).isEqualTo(pattern(8, 0, 2 * K4));
        assertThat(readDevice(device, 2 * K4, K4)).isEqualTo(new byte[K4]);
        assertThat(inode.pageCache().hasDirty()).isFalse();
    }
}
