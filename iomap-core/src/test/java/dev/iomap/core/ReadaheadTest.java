package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.mm.ReadaheadStats;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.Fault;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Readahead through {@link CachedInode#read}: which device reads a cold read issues (offsets and
 * lengths, exactly), that nothing past EOF, in holes or unwritten extents, or under a dirty folio is
 * read, and that truncates and writers racing the background part leave the right bytes. Most tests
 * run the background part on a {@link #queued} executor, so they decide when it runs.
 */
class ReadaheadTest {
    private static final int PAGE = 4096;
    private static final long MIB = 1L << 20;
    private static final long SEED = 7;

    private final CountingDevice device = new CountingDevice(new RamBlockDevice(PAGE, 32 * MIB));
    private final List<Runnable> queued = new ArrayList<>();
    private PageCacheOptions options = PageCacheOptions.builder().poisonNewFolios(true).build();
    private IomapCache cache;

    @AfterEach
    void close() throws Exception {
        if (cache != null) {
            cache.close();
        }
        device.close();
    }

    /** A file of {@code size} bytes, every block mapped at its own offset, the device holding the pattern. */
    private CachedInode file(long size, boolean queuedReadahead) throws Exception {
        long deviceBytes = (size + PAGE - 1) / PAGE * PAGE;
        device.write(0, ByteBuffer.wrap(pattern(SEED, 0, (int) deviceBytes)), IoPurpose.DATA).join();
        ExtentTestOps ops = new ExtentTestOps(PAGE);
        ops.set(0, deviceBytes / PAGE, IomapType.MAPPED);
        return file(size, ops, queuedReadahead);
    }

    private CachedInode file(long size, ExtentTestOps ops, boolean queuedReadahead) {
        cache = new IomapCache(options, device);
        if (queuedReadahead) {
            cache.readaheadPool().executor(queued::add);
        }
        CachedInode inode = cache.addInode(1, PAGE, size, 1L << 40, ops, ops);
        device.record(true);
        return inode;
    }

    private void runQueued() {
        List<Runnable> tasks = new ArrayList<>(queued);
        queued.clear();
        tasks.forEach(Runnable::run);
    }

    /** The device reads so far as {@code [offset, length]} pairs, by offset. */
    private List<List<Long>> deviceReads() {
        return device.requests().stream().filter(r -> r.kind() == Fault.Kind.READ)
                .sorted(Comparator.comparingLong(CountingDevice.Request::offset))
                .map(r -> List.of(r.offset(), r.length())).toList();
    }

    private static List<Long> io(long offset, long length) {
        return List.of(offset, length);
    }

    private static byte[] readAllInChunks(OpenFile file, int chunk) throws Exception {
        ByteBuffer all = ByteBuffer.allocate((int) file.size());
        for (long pos = 0; pos < file.size(); pos += chunk) {
            all.put(read(file, pos, (int) Math.min(chunk, file.size() - pos)));
        }
        return all.array();
    }

    @Test
    void aColdSequentialReadReadsGrowingWindowsOfLargeFoliesInTheBackground() throws Exception {
        options = PageCacheOptions.builder().poisonNewFolios(true).maxReadaheadBytes(2 * MIB).build();
        OpenFile file = file(8 * MIB, false).open();

        byte[] bytes = readAllInChunks(file, (int) MIB);
        cache.awaitReadahead();

        assertThat(bytes).isEqualTo(pattern(SEED, 0, (int) (8 * MIB)));
        // 1 MiB read by the reader itself, then windows of 1 and 2 MiB, one device read each
        assertThat(deviceReads()).containsExactly(io(0, MIB), io(MIB, MIB), io(2 * MIB, 2 * MIB),
                io(4 * MIB, 2 * MIB), io(6 * MIB, 2 * MIB));
        ReadaheadStats stats = cache.readaheadStats();
        assertThat(stats.syncWindows()).isEqualTo(1);
        assertThat(stats.asyncWindows()).isEqualTo(4);
        assertThat(stats.randomMisses()).isZero();
        assertThat(stats.bytesAdded()).isEqualTo(7 * MIB);
    }

    @Test
    void droppingTheCleanCacheWaitsForAReadaheadReadInFlightAndDropsItsFolioToo() throws Exception {
        // drop_caches right after a read found a background window's folio locked by the readahead
        // task reading it and left it cached (a flaky CI failure); the drop now waits for the pool
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        BlockDevice slow = new ForwardingBlockDevice(device) {
            @Override
            public void read(long offset, ByteBuffer dst) throws IOException {
                if (offset >= MIB && reading.getCount() > 0) {
                    reading.countDown();
                    awaitUninterruptibly(release);
                }
                super.read(offset, dst);
            }
        };
        device.write(0, ByteBuffer.wrap(pattern(SEED, 0, (int) (2 * MIB))), IoPurpose.DATA).join();
        ExtentTestOps ops = new ExtentTestOps(PAGE);
        ops.set(0, 2 * MIB / PAGE, IomapType.MAPPED);
        cache = new IomapCache(PageCacheOptions.builder().maxReadaheadBytes(MIB).build(), slow);
        OpenFile file = cache.addInode(1, PAGE, 2 * MIB, 1L << 40, ops, ops).open();

        assertThat(read(file, 0, (int) MIB)).isEqualTo(pattern(SEED, 0, (int) MIB));
        assertThat(reading.await(10, TimeUnit.SECONDS)).as("the background window's read started").isTrue();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            release.countDown();
        });
        cache.dropCleanCache();

        assertThat(file.inode().pageCache().folioCount()).isZero();
        assertThat(cache.cachedBytes()).isZero();
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aWindowOfLargeFoliosIsReadInATaskPerFolioSoThePoolsThreadsShareIt() throws Exception {
        options = PageCacheOptions.builder().poisonNewFolios(true).maxReadaheadBytes(8 * MIB).build();
        OpenFile file = file(16 * MIB, true).open();

        assertThat(read(file, 0, (int) (8 * MIB))).isEqualTo(pattern(SEED, 0, (int) (8 * MIB)));
        assertThat(file.readahead().window()).as("the next 8 MiB, all of it in the background")
                .containsExactly(2048, 2048, 2048);
        assertThat(queued).as("four 2 MiB folios, a task each").hasSize(4);
        device.clearRequests();
        for (int i = 0; i < 4; i++) {
            queued.get(i).run();
            assertThat(deviceReads()).as("task %d", i).hasSize(i + 1).last()
                    .isEqualTo(io((8 + 2 * i) * MIB, 2 * MIB));
        }
        queued.clear();
        assertThat(read(file, 8 * MIB, (int) (8 * MIB))).isEqualTo(pattern(SEED, 8 * MIB, (int) (8 * MIB)));
        assertThat(deviceReads()).as("the reader found every folio read").hasSize(4);
    }

    @Test
    void readaheadMapsWithoutWaitingAndWhatWouldWaitIsLeftForTheReaderToRead() throws Exception {
        // a cluster adapter's readahead must not wait for a glock whose demotion waits for the folios
        // the readahead holds locked (the gfs2-like deadlock): it asks NOWAIT, and a refusal only skips
        options = PageCacheOptions.builder().poisonNewFolios(true).maxReadaheadBytes(2 * MIB).build();
        device.write(0, ByteBuffer.wrap(pattern(SEED, 0, (int) (4 * MIB))), IoPurpose.DATA).join();
        ExtentTestOps ops = new ExtentTestOps(PAGE);
        ops.set(0, 4 * MIB / PAGE, IomapType.MAPPED);
        ops.refuseNowait();
        OpenFile file = file(4 * MIB, ops, true).open();

        assertThat(read(file, 0, (int) MIB)).isEqualTo(pattern(SEED, 0, (int) MIB));
        int readersOwn = ops.requests().size();
        assertThat(queued).isNotEmpty();
        runQueued();

        assertThat(ops.requests().subList(0, readersOwn)).as("the reader's own mappings wait as usual")
                .isNotEmpty().noneMatch(r -> r.contains(IomapRequest.NOWAIT));
        assertThat(ops.requests().subList(readersOwn, ops.requests().size())).as("readahead's")
                .isNotEmpty().allMatch(r -> r.contains(IomapRequest.NOWAIT));
        assertThat(deviceReads()).as("the refused readahead read nothing").containsExactly(io(0, MIB));
        assertThat(read(file, MIB, (int) MIB)).isEqualTo(pattern(SEED, MIB, (int) MIB));
        assertThat(deviceReads()).as("read on demand").contains(io(MIB, MIB));
    }

    @Test
    void smallSequentialReadsStartWithASmallWindowAndRampUp() throws Exception {
        OpenFile file = file(MIB, true).open();

        read(file, 0, PAGE);
        assertThat(file.readahead().window()).containsExactly(0, 4, 3);
        assertThat(queued).as("small folios of one window: one task").hasSize(1);
        runQueued();
        read(file, PAGE, PAGE);
        assertThat(file.readahead().window()).containsExactly(4, 16, 16);
        assertThat(queued).hasSize(1);
        runQueued();

        // page 0 by the reader; pages 1-3 as folios of orders 0 and 1; pages 4-19 as orders 2, 3, 2
        assertThat(deviceReads()).containsExactly(io(0, PAGE), io(PAGE, PAGE), io(2 * PAGE, 2 * PAGE),
                io(4 * PAGE, 4 * PAGE), io(8 * PAGE, 8 * PAGE), io(16 * PAGE, 4 * PAGE));
    }

    @Test
    void randomFourKibColdReadsReadExactlyFourKibEach() throws Exception {
        OpenFile file = file(8 * MIB, false).open();
        long[] offsets = {3 * MIB, MIB + 8192, 6 * MIB + 4096, 5 * MIB};

        for (long offset : offsets) {
            assertThat(read(file, offset, PAGE)).isEqualTo(pattern(SEED, offset, PAGE));
        }
        cache.awaitReadahead();

        assertThat(deviceReads()).containsExactly(io(MIB + 8192, PAGE), io(3 * MIB, PAGE), io(5 * MIB, PAGE),
                io(6 * MIB + 4096, PAGE));
        assertThat(cache.readaheadStats().randomMisses()).isEqualTo(4);
        assertThat(cache.readaheadStats().bytesAdded()).isZero();
    }

    @Test
    void nothingPastTheBlockHoldingEofIsReadAndEachBlockOnce() throws Exception {
        long size = MIB + 5000;
        OpenFile file = file(size, false).open();

        byte[] bytes = readAllInChunks(file, PAGE);
        cache.awaitReadahead();

        assertThat(bytes).isEqualTo(pattern(SEED, 0, (int) size));
        List<List<Long>> reads = deviceReads();
        long end = reads.getLast().get(0) + reads.getLast().get(1);
        assertThat(end).isEqualTo(MIB + 2 * PAGE);
        assertThat(reads.stream().mapToLong(r -> r.get(1)).sum()).as("bytes read, each block once")
                .isEqualTo(MIB + 2 * PAGE);
        assertThat(file.read(size, ByteBuffer.allocate(10))).isEqualTo(-1);
    }

    @Test
    void readaheadNeverReadsOverADirtyFolio() throws Exception {
        CachedInode inode = file(2 * MIB, false);
        OpenFile file = inode.open();
        byte[] written = pattern(99, 40 * 1024, PAGE);
        file.write(40 * 1024, ByteBuffer.wrap(written));
        device.clearRequests();

        byte[] bytes = readAllInChunks(file, 64 * 1024);
        cache.awaitReadahead();

        byte[] expected = pattern(SEED, 0, (int) (2 * MIB));
        System.arraycopy(written, 0, expected, 40 * 1024, PAGE);
        assertThat(bytes).isEqualTo(expected);
        assertThat(deviceReads()).allSatisfy(r ->
                assertThat(r.get(0) + r.get(1) <= 40 * 1024 || r.get(0) >= 44 * 1024).as("read %s", r).isTrue());
        assertThat(deviceReads().stream().mapToLong(r -> r.get(1)).sum()).isEqualTo(2 * MIB - PAGE);
        assertThat(inode.pageCache().lookup(10).isDirty()).isTrue();
    }

    @Test
    void holesAndUnwrittenExtentsAreZeroFilledWithoutDeviceReads() throws Exception {
        device.write(0, ByteBuffer.wrap(pattern(SEED, 0, (int) (4 * MIB))), IoPurpose.DATA).join();
        ExtentTestOps ops = new ExtentTestOps(PAGE);
        ops.set(0, 256, IomapType.MAPPED);
        ops.set(512, 256, IomapType.UNWRITTEN);
        ops.set(768, 256, IomapType.MAPPED);
        OpenFile file = file(4 * MIB, ops, false).open();

        byte[] bytes = readAllInChunks(file, 256 * 1024);
        cache.awaitReadahead();

        byte[] expected = pattern(SEED, 0, (int) (4 * MIB));
        java.util.Arrays.fill(expected, (int) MIB, (int) (3 * MIB), (byte) 0);
        assertThat(bytes).isEqualTo(expected);
        assertThat(deviceReads()).allSatisfy(r ->
                assertThat(r.get(0) + r.get(1) <= MIB || r.get(0) >= 3 * MIB).as("read %s", r).isTrue());
        assertThat(deviceReads().stream().mapToLong(r -> r.get(1)).sum()).isEqualTo(2 * MIB);
    }

    @Test
    void aReaderNeverWaitsForBackgroundReadaheadThatHasNotStarted() throws Exception {
        OpenFile file = file(4 * MIB, true).open();

        byte[] bytes = readAllInChunks(file, 128 * 1024);

        assertThat(bytes).isEqualTo(pattern(SEED, 0, (int) (4 * MIB)));
        assertThat(queued).isNotEmpty();
        runQueued();
        assertThat(cache.readaheadStats().bytesRead()).as("everything was read by the reader first").isZero();
        assertThat(cache.readaheadStats().foliosSkipped()).isPositive();
        assertThat(deviceReads().stream().mapToLong(r -> r.get(1)).sum()).isEqualTo(4 * MIB);
    }

    @Test
    void aShrinkingTruncateBeforeTheBackgroundReadLeavesOnlyBytesBelowTheNewSize() throws Exception {
        CachedInode inode = file(8 * MIB, true);
        OpenFile file = inode.open();
        read(file, 0, (int) MIB);
        assertThat(queued).hasSize(1);

        file.truncate(MIB + 100);
        runQueued();
        file.truncate(2 * MIB);

        byte[] expected = new byte[(int) MIB];
        System.arraycopy(pattern(SEED, MIB, 100), 0, expected, 0, 100);
        assertThat(read(file, MIB, (int) MIB)).isEqualTo(expected);
        assertThat(read(inode.open(), 0, (int) MIB)).isEqualTo(pattern(SEED, 0, (int) MIB));
        assertThat(deviceReads()).as("the straddling folio read only below EOF").contains(io(MIB, PAGE));
    }

    @Test
    void aTruncateRemovingTheWindowLeavesNothingToRead() throws Exception {
        CachedInode inode = file(8 * MIB, true);
        OpenFile file = inode.open();
        read(file, 0, (int) MIB);

        file.truncate(512 * 1024);
        runQueued();
        file.truncate(2 * MIB);

        assertThat(read(file, 512 * 1024, (int) (3 * MIB / 2))).isEqualTo(new byte[(int) (3 * MIB / 2)]);
        assertThat(deviceReads()).containsExactly(io(0, MIB));
        assertThat(cache.readaheadStats().foliosSkipped()).isEqualTo(1);
    }

    @Test
    void backgroundReadaheadGivesWayToAWriterHoldingTheInode() throws Exception {
        CachedInode inode = file(4 * MIB, true);
        OpenFile file = inode.open();
        read(file, 0, (int) MIB);

        inode.withExclusiveLock(() -> {
            Thread other = new Thread(this::runQueued);
            other.start();
            try {
                other.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });

        assertThat(cache.readaheadStats().foliosSkipped()).isEqualTo(1);
        assertThat(cache.readaheadStats().bytesRead()).isZero();
        assertThat(read(file, MIB, (int) MIB)).isEqualTo(pattern(SEED, MIB, (int) MIB));
    }

    @Test
    void aWriteIntoAQueuedReadaheadFolioIsKept() throws Exception {
        CachedInode inode = file(4 * MIB, true);
        OpenFile file = inode.open();
        read(file, 0, (int) MIB);
        byte[] written = pattern(42, MIB + 300, 1000);
        file.write(MIB + 300, ByteBuffer.wrap(written));

        runQueued();

        byte[] expected = pattern(SEED, MIB, (int) MIB);
        System.arraycopy(written, 0, expected, 300, 1000);
        assertThat(read(file, MIB, (int) MIB)).isEqualTo(expected);
        assertThat(cache.readaheadStats().foliosSkipped()).isEqualTo(1);
    }

    @Test
    void readaheadOffReadsOnlyWhatEachReadNeeds() throws Exception {
        device.write(0, ByteBuffer.wrap(pattern(SEED, 0, (int) (2 * MIB))), IoPurpose.DATA).join();
        ExtentTestOps ops = new ExtentTestOps(PAGE);
        ops.set(0, 512, IomapType.MAPPED);
        cache = new IomapCache(PageCacheOptions.builder().maxReadaheadBytes(0).build(), device);
        OpenFile file = cache.addInode(1, PAGE, 2 * MIB, 1L << 40, ops, ops).open();
        device.record(true);

        readAllInChunks(file, 256 * 1024);
        cache.awaitReadahead();

        assertThat(deviceReads()).hasSize(8).allSatisfy(r -> assertThat(r.get(1)).isEqualTo(256 * 1024));
        assertThat(cache.readaheadStats()).isEqualTo(new ReadaheadStats(0, 0, 0, 0, 0, 0));
    }
}
