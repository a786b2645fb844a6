package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Group commit of flushes: one sync covers every request made before it started, and nothing later. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FlushBatchTest {
    private final FlushBatch batch = new FlushBatch();

    @Test
    void requestsMadeWhileASyncRunsShareTheNextOneAndNeverTheRunningOne() throws Exception {
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        AtomicInteger syncs = new AtomicInteger();
        FlushBatch.Sync sync = () -> {
            if (syncs.incrementAndGet() == 1) {
                firstStarted.countDown();
                await(releaseFirst);
            }
        };
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            Future<?> first = threads.submit(() -> {
                batch.flush(sync);
                return null;
            });
            firstStarted.await();
            List<Future<?>> later = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                later.add(threads.submit(() -> {
                    batch.flush(sync);
                    return null;
                }));
            }
            while (batch.requested() < 4) {
                Thread.onSpinWait();
            }
            assertThat(later).noneMatch(Future::isDone); // the running sync started before they asked

            releaseFirst.countDown();
            first.get();
            for (Future<?> f : later) {
                f.get();
            }
            assertThat(syncs).hasValue(2);
            assertThat(batch.syncs()).isEqualTo(2);
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aLoneFlushRunsItsOwnSyncEveryTime() throws IOException {
        AtomicInteger syncs = new AtomicInteger();
        for (int i = 0; i < 5; i++) {
            batch.flush(syncs::incrementAndGet);
        }
        assertThat(syncs).hasValue(5);
    }

    @Test
    void aFailedSyncCoversNobodyAndTheNextRequestSyncsAgain() throws IOException {
        AtomicInteger syncs = new AtomicInteger();
        assertThatThrownBy(() -> batch.flush(() -> {
            syncs.incrementAndGet();
            throw new IOException("disk gone");
        })).hasMessage("disk gone");
        batch.flush(syncs::incrementAndGet);
        assertThat(syncs).hasValue(2);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
