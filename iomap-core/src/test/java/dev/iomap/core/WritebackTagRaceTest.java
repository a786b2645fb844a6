package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.testkit.TestData.buffer;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.mm.CacheStats;
import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.PageCache;
import dev.iomap.devices.RamBlockDevice;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Writeback's flags and tags must change so that a folio is never seen neither dirty nor under
 * writeback while its data is on the way to the device, and the writeback flag and tag must change
 * together.
 *
 * <p>Dirty to writeback: when writeback cleared the dirty flag and tag, and then set the writeback
 * flag and tag, a zero range falling between the two saw no dirty and no in-flight cache, skipped its
 * flush, found a hole where the flusher was about to allocate, skipped zeroing it, and lost its zeroes
 * to the flusher's late write (CI, the model checker on bcachefs-like under memory pressure: 30 bytes of
 * a partial tail block). The kernel keeps the dirty tag until {@code __folio_start_writeback} swaps it
 * for the writeback tag under one lock.
 *
 * <p>Writeback to clean: the writeback flag and the writeback tag must change together. If {@code finishWriteback} cleared
 * the flag and removed the tag in two steps, a thread holding the folio lock could see the flag clear
 * and start writeback again (its tag insertion a no-op, the old tag still there), and then lose the
 * tag to the late removal: the folio was under writeback but untagged, so fsync's wait skipped it and
 * returned before the write and its completion work.
 *
 * <p>The interleaving is forced, not hoped for: the completing thread is stopped at the tag removal,
 * the restarting thread runs until it either finishes (two steps: the flag was already clear) or
 * blocks (the flag and tag change under one monitor), and only then is the removal let go.
 */
class WritebackTagRaceTest {

    @Test
    void writebackStartedAgainWhileTheLastOneEndsKeepsItsTag() throws Exception {
        PageCache cache = new PageCache(PageCacheOptions.defaults(), 4096, new CacheStats());
        Folio folio = cache.grabLocked(0, 0);
        folio.clearDirtyAndStartWriteback();
        folio.unlock();

        CountDownLatch atUntag = new CountDownLatch(1);
        CountDownLatch letUntagGo = new CountDownLatch(1);
        cache.beforeWritebackUntag(f -> {
            cache.beforeWritebackUntag(any -> { });
            atUntag.countDown();
            awaitQuietly(letUntagGo);
        });
        Thread completion = new Thread(() -> folio.finishWriteback(1), "completion");
        completion.start();
        assertThat(atUntag.await(10, TimeUnit.SECONDS)).isTrue();

        Thread writer = new Thread(() -> {
            folio.lock();
            try {
                folio.waitWriteback();
                folio.clearDirtyAndStartWriteback();
            } finally {
                folio.unlock();
            }
        }, "writer");
        writer.start();
        awaitFinishedOrBlocked(writer);
        letUntagGo.countDown();
        completion.join(10_000);
        writer.join(10_000);

        assertThat(completion.isAlive()).isFalse();
        assertThat(writer.isAlive()).isFalse();
        assertThat(folio.isWriteback()).isTrue();
        assertThat(cache.hasWriteback())
                .as("a folio under writeback must stay tagged, or fsync does not wait for it")
                .isTrue();
        assertThat(cache.nextWriteback(0, Long.MAX_VALUE)).isZero();
        assertThat(cache.nextWriteback(1, Long.MAX_VALUE)).isEqualTo(-1);

        folio.finishWriteback(1);
        assertThat(cache.hasWriteback()).isFalse();
    }

    @Test
    void aFolioMovingFromDirtyToWritebackIsAlwaysOneOrTheOther() throws Exception {
        PageCache cache = new PageCache(PageCacheOptions.defaults(), 4096, new CacheStats());
        Folio folio = cache.grabLocked(0, 0);
        folio.markDirty();
        AtomicReference<String> seen = new AtomicReference<>();
        cache.beforeWritebackTag(f -> seen.set("cache dirty " + cache.hasDirty() + ", cache writeback "
                + cache.hasWriteback() + ", folio dirty " + f.isDirty() + ", folio writeback " + f.isWriteback()
                + ", dirty walk " + cache.nextDirty(0, Long.MAX_VALUE)));

        folio.clearDirtyAndStartWriteback();
        folio.unlock();

        assertThat(seen.get()).as("in the middle of the move")
                .isEqualTo("cache dirty true, cache writeback false, folio dirty false, folio writeback true,"
                        + " dirty walk 0");
        assertThat(cache.hasDirty()).isFalse();
        assertThat(cache.hasWriteback()).isTrue();
        assertThat(folio.isDirty()).isFalse();
        folio.finishWriteback(1);
        assertThat(cache.hasWriteback()).isFalse();
    }

    @Test
    void zeroRangeDuringAFlushersStartOfWritebackWaitsForItAndZeroes() throws Exception {
        int k1 = 1024;
        RamBlockDevice device = new RamBlockDevice(k1, 1 << 20);
        ExtentTestOps ops = new ExtentTestOps(k1);
        ops.publishAtCompletion();  // a hole until the ioend completes, as a copy-on-write adapter does
        IomapCache iomapCache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(0).build(), device);
        CachedInode inode = iomapCache.addInode(1, k1, 4L * k1, 1L << 30, ops, ops);
        assertThat(inode.write(0, CopySource.of(buffer(7, 0, 4 * k1)), 4L * k1)).isEqualTo(4L * k1);

        CountDownLatch atTag = new CountDownLatch(1);
        CountDownLatch letTagGo = new CountDownLatch(1);
        inode.pageCache().beforeWritebackTag(f -> {
            inode.pageCache().beforeWritebackTag(any -> { });
            atTag.countDown();
            awaitQuietly(letTagGo);
        });
        Thread flusher = new Thread(() -> inode.writeback(0, Long.MAX_VALUE, false), "flusher");
        flusher.start();
        assertThat(atTag.await(10, TimeUnit.SECONDS)).isTrue();

        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread zeroer = new Thread(() -> {
            try {
                inode.zeroRange(3 * k1 + 100, 200);
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "zeroer");
        zeroer.start();
        awaitFinishedOrBlocked(zeroer);
        letTagGo.countDown();
        flusher.join(10_000);
        zeroer.join(10_000);
        assertThat(flusher.isAlive()).isFalse();
        assertThat(zeroer.isAlive()).isFalse();
        assertThat(failure.get()).isNull();

        byte[] expected = buffer(7, 0, 4 * k1).array().clone();
        Arrays.fill(expected, 3 * k1 + 100, 3 * k1 + 300, (byte) 0);
        assertThat(Arrays.mismatch(read(inode.open(), 0, 4 * k1), expected)).as("first wrong byte through the cache")
                .isEqualTo(-1);
        inode.flushAndInvalidate(0, Long.MAX_VALUE);
        assertThat(inode.pageCache().folioCount()).isZero();
        assertThat(Arrays.mismatch(read(inode.open(), 0, 4 * k1), expected))
                .as("first wrong byte after writeback, from the device").isEqualTo(-1);
        iomapCache.close();
    }

    private static void awaitFinishedOrBlocked(Thread thread) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            Thread.State state = thread.getState();
            if (state == Thread.State.TERMINATED || state == Thread.State.BLOCKED
                    || state == Thread.State.WAITING) {
                return;
            }
            Thread.sleep(1);
        }
        throw new AssertionError("writer neither finished nor blocked: " + thread.getState());
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
