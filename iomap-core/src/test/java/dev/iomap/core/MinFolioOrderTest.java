package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.mm.Folio;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.Fault;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.spi.IomapType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Blocks of 16 KiB over pages of 4 KiB through the iomap paths: the mapping's minimum folio order is
 * 2, so every folio the reads, writes, readahead and write faults create has order 2 or more and an
 * index that is a multiple of 4, a sub-block write dirties one block-sized folio and writeback writes
 * exactly that block, and truncation inside a block zeroes its tail and keeps the folio (the kernel's
 * large block size support, 6.12). Exact device requests and folio indices throughout.
 */
class MinFolioOrderTest {
    private static final int PAGE = 4096;
    private static final int BLOCK = 16384;
    private static final long MIB = 1L << 20;
    private static final long SEED = 39;

    private final CountingDevice device = new CountingDevice(new RamBlockDevice(PAGE, 8 * MIB));
    private final List<Runnable> queued = new ArrayList<>();
    private IomapCache cache;

    @AfterEach
    void close() throws Exception {
        if (cache != null) {
            cache.close();
        }
        device.close();
    }

    /** Single-page folios asked for, no readahead unless {@code readahead} bytes are given. */
    private static PageCacheOptions options(int maxFolioOrder, long readahead) {
        return PageCacheOptions.builder().pageSize(PAGE).maxFolioOrder(maxFolioOrder).poisonNewFolios(true)
                .maxReadaheadBytes(readahead).build();
    }

    /**
     * A file of {@code size} bytes of 16 KiB blocks, every block mapped at its own offset, the device
     * holding the pattern; readahead runs when {@link #runQueued} runs it.
     */
    private CachedInode file(PageCacheOptions options, long size) throws Exception {
        device.write(0, ByteBuffer.wrap(pattern(SEED, 0, (int) size)), IoPurpose.DATA).join();
        ExtentTestOps ops = new ExtentTestOps(BLOCK);
        ops.set(0, size / BLOCK, IomapType.MAPPED);
        cache = new IomapCache(options, device);
        cache.readaheadPool().executor(queued::add);
        CachedInode inode = cache.addInode(1, BLOCK, size, 1L << 40, ops, ops);
        device.record(true);
        return inode;
    }

    private void runQueued() {
        List<Runnable> tasks = new ArrayList<>(queued);
        queued.clear();
        tasks.forEach(Runnable::run);
    }

    private List<List<Long>> deviceRequests(Fault.Kind kind) {
        return device.requests().stream().filter(r -> r.kind() == kind)
                .sorted(Comparator.comparingLong(CountingDevice.Request::offset))
                .map(r -> List.of(r.offset(), r.length())).toList();
    }

    private static List<Long> io(long offset, long length) {
        return List.of(offset, length);
    }

    /** The cached folios as {@code [index, order]} pairs, by index. */
    private static List<List<Long>> folios(CachedInode inode) {
        return inode.pageCache().foliosIn(0, Long.MAX_VALUE >>> 12).stream()
                .map(f -> List.of(f.index(), (long) f.order())).toList();
    }

    private static List<Long> folio(long index, int order) {
        return List.of(index, (long) order);
    }

    @Test
    void theMappingsMinimumOrderIsOneBlockAndTheLargestIsRaisedToIt() throws Exception {
        CachedInode inode = file(options(0, 0), 4 * BLOCK);

        assertThat(inode.pageCache().minOrder()).isEqualTo(2);
        assertThat(inode.pageCache().maxOrder()).isEqualTo(2);
        assertThat(inode.pageCache().alignIndex(7)).isEqualTo(4);
        assertThat(inode.pageCache().orderAt(5, 0)).isEqualTo(2);
    }

    @Test
    void aReadOfOnePageInTheMiddleOfABlockReadsTheWholeBlockIntoOneFolio() throws Exception {
        CachedInode inode = file(options(0, 0), 4 * BLOCK);

        byte[] got = read(inode.open(), BLOCK + 5000, 100);

        assertThat(got).isEqualTo(Arrays.copyOfRange(pattern(SEED, 0, 4 * BLOCK), BLOCK + 5000, BLOCK + 5100));
        assertThat(folios(inode)).containsExactly(folio(4, 2));
        assertThat(deviceRequests(Fault.Kind.READ)).containsExactly(io(BLOCK, BLOCK));
    }

    @Test
    void largeFolioHintsAreRaisedToTheMinimumCappedAtTheLargestAndAlignedToTheIndex() throws Exception {
        CachedInode inode = file(options(3, 0), 16 * BLOCK);

        // 40 KiB from page 4: the hint is order 3 but index 4 is aligned to order 2 only; then 24 KiB
        // are left (hint order 2) and 8 KiB (hint order 1, raised to the minimum 2)
        read(inode.open(), BLOCK, 40960);
        // 192 KiB from page 16 to EOF: hint order 5, capped at the largest order 3
        read(inode.open(), 4 * BLOCK, 12 * BLOCK);

        assertThat(folios(inode)).containsExactly(folio(4, 2), folio(8, 2), folio(12, 2), folio(16, 3),
                folio(24, 3), folio(32, 3), folio(40, 3), folio(48, 3), folio(56, 3));
    }

    @Test
    void aSubBlockWriteDirtiesOneBlockSizedFolioAndWritebackWritesExactlyThatBlock() throws Exception {
        CachedInode inode = file(options(0, 0), 4 * BLOCK);
        OpenFile file = inode.open();

        file.write(2 * BLOCK + 6000, ByteBuffer.wrap(new byte[] {1, 2, 3}));

        assertThat(folios(inode)).containsExactly(folio(8, 2));
        Folio folio = inode.pageCache().lookup(9);
        assertThat(folio.index()).isEqualTo(8);
        assertThat(folio.isDirty()).isTrue();
        assertThat(folio.size()).isEqualTo(BLOCK);
        // the rest of the block was read to fill the folio, once
        assertThat(deviceRequests(Fault.Kind.READ)).containsExactly(io(2 * BLOCK, BLOCK));

        file.fsync();

        assertThat(deviceRequests(Fault.Kind.WRITE)).containsExactly(io(2 * BLOCK, BLOCK));
        byte[] expected = pattern(SEED, 0, 4 * BLOCK);
        expected[2 * BLOCK + 6000] = 1;
        expected[2 * BLOCK + 6001] = 2;
        expected[2 * BLOCK + 6002] = 3;
        assertThat(TestIo.readDevice(device, 0, 4 * BLOCK)).isEqualTo(expected);
    }

    @Test
    void aWriteFaultOnOnePageOfABlockDirtiesTheWholeBlock() throws Exception {
        CachedInode inode = file(options(0, 0), 4 * BLOCK);

        inode.map().store(3 * BLOCK + 3 * PAGE + 10, ByteBuffer.wrap(new byte[] {7}));

        assertThat(folios(inode)).containsExactly(folio(12, 2));
        Folio folio = inode.pageCache().lookup(15);
        assertThat(folio.isDirty()).isTrue();
        assertThat(folio.size()).isEqualTo(BLOCK);
        inode.open().fsync();
        assertThat(deviceRequests(Fault.Kind.WRITE)).containsExactly(io(3 * BLOCK, BLOCK));
    }

    @Test
    void readaheadAddsOnlyMinimumOrderFoliosAtAlignedIndicesAndReadsWholeBlocks() throws Exception {
        CachedInode inode = file(options(0, 256 * 1024), 32 * BLOCK);
        OpenFile file = inode.open();

        // a miss at page 5, in the middle of block 1: the reader's folio is [4, 8)
        read(file, 5 * PAGE, PAGE);
        runQueued();

        List<List<Long>> cached = folios(inode);
        assertThat(cached).isNotEmpty().allSatisfy(f -> {
            assertThat(f.get(0) % 4).as("index of %s", f).isZero();
            assertThat(f.get(1)).as("order of %s", f).isEqualTo(2L);
        });
        assertThat(cached.getFirst()).isEqualTo(folio(4, 2));
        assertThat(deviceRequests(Fault.Kind.READ)).allSatisfy(r -> {
            assertThat(r.get(0) % BLOCK).as("offset of %s", r).isZero();
            assertThat(r.get(1) % BLOCK).as("length of %s", r).isZero();
        });
        assertThat(cache.readaheadStats().bytesAdded()).isEqualTo((cached.size() - 1) * (long) BLOCK);
        assertThat(readAll(file)).isEqualTo(pattern(SEED, 0, 32 * BLOCK));
    }

    @Test
    void readaheadRoundsAWindowEndingInsideTheBlockHoldingEofUpToTheWholeBlock() throws Exception {
        // EOF in page 6, in the file's 2nd block; a first read of 2 pages opens the window [2, 8),
        // cut at page 7 (EOF) and rounded up to page 8, the block's end
        CachedInode inode = file(options(0, 256 * 1024), 2 * BLOCK);
        inode.truncate(BLOCK + 2 * PAGE + 100, null);
        inode.open().fsync();
        inode.invalidateCache();
        device.clearRequests();

        read(inode.open(), 0, 2 * PAGE);
        runQueued();

        assertThat(folios(inode)).containsExactly(folio(0, 2), folio(4, 2));
        assertThat(deviceRequests(Fault.Kind.READ)).containsExactly(io(0, BLOCK), io(BLOCK, BLOCK));
    }

    @Test
    void truncatingInsideABlockZeroesItsTailAndKeepsTheFolio() throws Exception {
        CachedInode inode = file(options(0, 0), 4 * BLOCK);
        OpenFile file = inode.open();
        readAll(file);
        Folio straddling = inode.pageCache().lookup(5);

        inode.truncate(BLOCK + 5000, null);

        assertThat(folios(inode)).containsExactly(folio(0, 2), folio(4, 2));
        assertThat(inode.pageCache().lookup(5)).isSameAs(straddling);
        assertThat(straddling.isRemoved()).isFalse();
        byte[] tail = new byte[BLOCK - 5000];
        straddling.memory().asSlice(5000).asByteBuffer().get(tail);
        assertThat(tail).isEqualTo(new byte[BLOCK - 5000]);

        file.fsync();
        inode.truncate(2 * BLOCK, null);

        byte[] expected = Arrays.copyOf(pattern(SEED, 0, BLOCK + 5000), 2 * BLOCK);
        assertThat(read(file, 0, 2 * BLOCK)).isEqualTo(expected);
    }

    @Test
    void aDirectWriteOfOneBlockDropsExactlyThatBlocksFolio() throws Exception {
        CachedInode inode = file(options(0, 0), 4 * BLOCK);
        OpenFile file = inode.open();
        readAll(file);
        device.clearRequests();
        byte[] data = pattern(7, BLOCK, BLOCK);

        new dev.iomap.core.dio.DirectIo(inode).write(BLOCK, ByteBuffer.wrap(data));

        assertThat(folios(inode)).containsExactly(folio(0, 2), folio(8, 2), folio(12, 2));
        assertThat(deviceRequests(Fault.Kind.WRITE)).containsExactly(io(BLOCK, BLOCK));
        assertThat(read(file, BLOCK, BLOCK)).isEqualTo(data);
    }

    @Test
    void aSubBlockDirectWriteGoesThroughTheBlocksFolioAndWritesTheWholeBlock() throws Exception {
        CachedInode inode = file(options(0, 0), 4 * BLOCK);
        byte[] data = pattern(8, 2 * BLOCK + PAGE, PAGE);

        new dev.iomap.core.dio.DirectIo(inode).write(2 * BLOCK + PAGE, ByteBuffer.wrap(data));

        // read to fill the block's folio, written back whole, and dropped
        assertThat(deviceRequests(Fault.Kind.READ)).containsExactly(io(2 * BLOCK, BLOCK));
        assertThat(deviceRequests(Fault.Kind.WRITE)).containsExactly(io(2 * BLOCK, BLOCK));
        assertThat(folios(inode)).isEmpty();
        byte[] expected = pattern(SEED, 0, 4 * BLOCK);
        System.arraycopy(data, 0, expected, 2 * BLOCK + PAGE, PAGE);
        assertThat(TestIo.readDevice(device, 0, 4 * BLOCK)).isEqualTo(expected);
    }

    private static byte[] readAll(OpenFile file) throws Exception {
        return read(file, 0, (int) file.size());
    }
}
