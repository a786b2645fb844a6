package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The writeback flag and the writeback tag must change together. When {@code finishWriteback} cleared
 * the flag and removed the tag in two steps, a thread holding the folio lock could see the flag clear
 * and start writeback again (its tag insertion a no-op, the old tag still there), and then lose the
 * tag to the late removal: the folio was under writeback but untagged, so fsync's wait skipped it and
 * returned before the write and its completion work.
 *
 * <p>The interleaving is forced, not hoped for: the completing thread is stopped at the tag removal,
 * the restarting thread runs until it either finishes (the old code: the flag was already clear) or
 * blocks (the fix: the flag and tag change under one monitor), and only then is the removal let go.
 */
class WritebackTagRaceTest {

    @Test
    void writebackStartedAgainWhileTheLastOneEndsKeepsItsTag() throws Exception {
        PageCache cache = new PageCache(PageCacheOptions.defaults(), 4096, new CacheStats());
        Folio folio = cache.grabLocked(0, 0);
        folio.startWriteback();
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
                folio.startWriteback();
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
