package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Committers, flushers, readers and checkpoints on several threads at once. */
class StoreConcurrencyTest {
    private static final int THREADS = 4;
    private static final int PER_THREAD = 400;

    private static byte[] counter(int n) {
        return ByteBuffer.allocate(4).putInt(n).array();
    }

    @Test
    void concurrentCommitsFlushesScansAndCheckpointsLoseNothing() throws Exception {
        RamBlockDevice device = StoreBasicsTest.formatted(1024, 4L << 20);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS + 2);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < PER_THREAD; i++) {
                        long seq = store.update().put(new BKey(1 + thread, i, 0), counter(i))
                                .put(new BKey(9, thread, 0), counter(i)).commit();
                        if (i % 5 == 0) {
                            store.flush(seq);
                        }
                    }
                    return null;
                }));
            }
            futures.add(pool.submit(() -> {
                for (int i = 0; i < 20; i++) {
                    store.checkpoint();
                    Thread.sleep(2);
                }
                return null;
            }));
            futures.add(pool.submit(() -> {
                for (int i = 0; i < 200; i++) {
                    List<KeyValue> counters = store.scan(new BKey(9, 0, 0), new BKey(10, 0, 0), 100);
                    for (KeyValue kv : counters) {
                        List<KeyValue> rows = store.scan(new BKey(1 + (int) kv.key().inode(), 0, 0),
                                new BKey(2 + (int) kv.key().inode(), 0, 0), Integer.MAX_VALUE);
                        int last = ByteBuffer.wrap(kv.value()).getInt();
                        assertTrue(rows.size() >= last + 1, "a counter is never ahead of its rows");
                    }
                }
                return null;
            }));
            for (Future<?> f : futures) {
                f.get(2, TimeUnit.MINUTES);
            }
            store.flushAll();
            assertTrue(store.stats().journalFlushes() <= THREADS * PER_THREAD / 5,
                    "group commit: " + store.stats().journalFlushes() + " journal writes");
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(1, TimeUnit.MINUTES));
        }
        assertEquals(List.of(), StoreCheck.check(device));
        try (BtreeStore store = BtreeStore.open(device, true)) {
            for (int t = 0; t < THREADS; t++) {
                List<KeyValue> rows = store.scan(new BKey(1 + t, 0, 0), new BKey(2 + t, 0, 0), Integer.MAX_VALUE);
                assertEquals(PER_THREAD, rows.size());
                for (int i = 0; i < PER_THREAD; i++) {
                    assertArrayEquals(counter(i), rows.get(i).value());
                }
                assertArrayEquals(counter(PER_THREAD - 1), store.get(new BKey(9, t, 0)).orElseThrow());
            }
        }
    }
}
