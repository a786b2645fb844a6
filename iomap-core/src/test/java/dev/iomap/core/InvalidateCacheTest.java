package dev.iomap.core;

import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.DeviceStats;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.DirtyCacheException;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.WritebackOps;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link IomapInode#invalidateCache}, the invalidation step of a glock demotion, after
 * {@link IomapInode#writeAndWait}, its sync step: used through the adapter-facing interface only.
 */
class InvalidateCacheTest {
    private static final int K4 = 4096;

    private final CountingDevice device = new CountingDevice(new RamBlockDevice(K4, 16L << 20));

    private static MapBlocksWriteback identity() throws Exception {
        MapBlocksWriteback ops = OpsMocks.writebackOps();
        when(ops.mapBlocks(any(), anyLong(), anyLong())).thenAnswer(call -> Iomap.mapped(
                call.<Long>getArgument(1), call.<Long>getArgument(2), call.<Long>getArgument(1)));
        return ops;
    }

    private CachedInode newInode(PageCacheOptions options) throws Exception {
        IomapCache cache = new IomapCache(options, device);
        return cache.addInode(1, K4, 0, 1L << 30, new BlockDeviceMapping(device), identity());
    }

    @Test
    void afterWriteAndWaitAndInvalidateTheNextReadComesFromTheDevice() throws Exception {
        CachedInode inode = newInode(PageCacheOptions.builder().maxFolioOrder(0).build());
        OpenFile file = inode.open();
        file.write(0, buffer(3, 0, 4 * K4));
        IomapInode adapterView = inode;
        adapterView.writeAndWait(0, Long.MAX_VALUE);
        DeviceStats beforeCachedRead = device.stats();
        assertThat(TestIo.read(file, 0, 4 * K4)).isEqualTo(pattern(3, 0, 4 * K4));
        assertThat(device.stats().minus(beforeCachedRead).reads()).as("cached read").isZero();

        long dropped = adapterView.invalidateCache();

        assertThat(dropped).isEqualTo(4);
        assertThat(inode.pageCache().folioCount()).isZero();
        assertThat(adapterView.size()).isEqualTo(4 * K4);
        DeviceStats beforeRead = device.stats();
        assertThat(TestIo.read(file, 0, 4 * K4)).isEqualTo(pattern(3, 0, 4 * K4));
        DeviceStats read = device.stats().minus(beforeRead);
        assertThat(read.reads()).isPositive();
        assertThat(read.bytesRead()).isEqualTo(4 * K4);
    }

    @Test
    void theCountIsInPagesWhateverTheFolioSize() throws Exception {
        CachedInode inode = newInode(PageCacheOptions.builder().build());
        inode.open().write(0, buffer(4, 0, 64 * 1024));
        inode.writeAndWait(0, Long.MAX_VALUE);
        int folios = inode.pageCache().folioCount();

        long dropped = inode.invalidateCache();

        assertThat(dropped).isEqualTo(16);
        assertThat(folios).as("large folios were used").isLessThan(16);
        assertThat(inode.invalidateCache()).as("nothing left to drop").isZero();
    }

    @Test
    void aFolioStillDirtyIsKeptAndReportedNotLost() throws Exception {
        CachedInode inode = newInode(PageCacheOptions.builder().maxFolioOrder(0).build());
        OpenFile file = inode.open();
        file.write(0, buffer(5, 0, 3 * K4));
        inode.writeAndWait(0, K4);   // page 0 written back; pages 1 and 2 still dirty

        assertThatThrownBy(inode::invalidateCache).isInstanceOf(DirtyCacheException.class)
                .hasMessageContaining("inode 1 still has 2 dirty page(s) from offset 4096")
                .satisfies(e -> assertThat(((DirtyCacheException) e).dirtyPages()).isEqualTo(2))
                .satisfies(e -> assertThat(((DirtyCacheException) e).ino()).isEqualTo(1));

        assertThat(inode.pageCache().lookup(0)).as("the clean page was dropped").isNull();
        assertThat(inode.pageCache().lookup(1).isDirty()).isTrue();
        assertThat(inode.pageCache().lookup(2).isDirty()).isTrue();
        file.fsync();
        assertThat(TestIo.readDevice(device, 0, 3 * K4)).isEqualTo(pattern(5, 0, 3 * K4));
        assertThat(inode.invalidateCache()).isEqualTo(2);
    }

    @Test
    void aRangeWrittenBackButNotInvalidatedStillReadsFromTheCache() throws Exception {
        CachedInode inode = newInode(PageCacheOptions.builder().maxFolioOrder(0).build());
        OpenFile file = inode.open();
        file.write(0, buffer(6, 0, 2 * K4));
        inode.writeAndWait(0, Long.MAX_VALUE);
        DeviceStats before = device.stats();

        assertThat(TestIo.read(file, 0, 2 * K4)).isEqualTo(pattern(6, 0, 2 * K4));

        assertThat(device.stats().minus(before).reads()).isZero();
        assertThat(TestIo.readDevice(device, 0, 2 * K4)).isEqualTo(pattern(6, 0, 2 * K4));
    }

    @Test
    void itDoesNotWaitForTheInodeLockWhichAWriterWaitingForTheGlockHolds() throws Exception {
        CachedInode inode = newInode(PageCacheOptions.builder().maxFolioOrder(0).build());
        inode.open().write(0, buffer(7, 0, 2 * K4));
        inode.writeAndWait(0, Long.MAX_VALUE);
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Thread writer = Thread.ofPlatform().name("writer-holding-the-inode-lock").start(() -> {
            try {
                inode.withExclusiveLock(() -> {
                    locked.countDown();
                    awaitUninterruptibly(finish);
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            assertThat(locked.await(30, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Long> dropped = CompletableFuture.supplyAsync(inode::invalidateCache,
                    command -> Thread.ofPlatform().name("demotion").start(command));

            assertThat(dropped.get(30, TimeUnit.SECONDS)).as("no wait for the inode lock").isEqualTo(2);
        } finally {
            finish.countDown();
            writer.join(30_000);
        }
        assertThat(writer.isAlive()).isFalse();
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (latch.getCount() > 0) {
            try {
                latch.await();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
