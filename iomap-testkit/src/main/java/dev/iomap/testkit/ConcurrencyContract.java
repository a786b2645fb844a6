package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Several threads at once: writers of disjoint ranges of one file (sharing blocks and folios),
 * writers of their own files, readers of stable data, fsync, sync and cache drops racing them, and
 * concurrent namespace changes. Each test is bounded in time; a hang fails it.
 */
public abstract class ConcurrencyContract extends AdapterContract {
    private static final int THREADS = 4;
    private static final long TIMEOUT_SECONDS = 60;

    /** A task that may throw. */
    @FunctionalInterface
    protected interface Task {
        /**
         * @param thread the thread's number, from 0
         * @throws Exception anything; it fails the test
         */
        void run(int thread) throws Exception;
    }

    /**
     * Runs {@code task} on {@code threads} threads started together and waits for all of them.
     *
     * @param threads how many
     * @param task what each runs
     * @throws Exception the first failure
     */
    protected static void runConcurrently(int threads, Task task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    task.run(thread);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : futures) {
                try {
                    future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Exception cause) {
                        throw cause;
                    }
                    throw e;
                } catch (TimeoutException e) {
                    fail("a thread did not finish in %d s: deadlock or livelock", TIMEOUT_SECONDS);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void appendsThroughSeveralOpenFilesLandWholeInEachWritersOrder() throws Exception {
        int records = 40;
        create("/log");
        List<IomapFile> files = new ArrayList<>();
        for (int thread = 0; thread < THREADS; thread++) {
            files.add(open("/log", java.util.EnumSet.of(dev.iomap.api.OpenFlag.APPEND)));
        }
        runConcurrently(THREADS, thread -> {
            for (int i = 0; i < records; i++) {
                ByteBuffer src = ByteBuffer.wrap(appendRecord(thread, i));
                while (src.hasRemaining()) {
                    files.get(thread).write(0, src);
                }
            }
        });
        IomapFile log = open("/log");
        byte[] all = new byte[(int) log.size()];
        ByteBuffer dst = ByteBuffer.wrap(all);
        while (dst.hasRemaining() && log.read(dst.position(), dst) > 0) {
            // until full
        }
        List<String> lines = List.of(new String(all, java.nio.charset.StandardCharsets.US_ASCII).split("\n"));
        assertThat(lines).hasSize(THREADS * records);
        for (int thread = 0; thread < THREADS; thread++) {
            String mark = "t" + thread + ":";
            List<String> wanted = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                String record = new String(appendRecord(thread, i), java.nio.charset.StandardCharsets.US_ASCII);
                wanted.add(record.substring(0, record.length() - 1));
            }
            assertThat(lines.stream().filter(line -> line.startsWith(mark)).toList())
                    .as("thread %d's records, whole and in order", thread).isEqualTo(wanted);
        }
    }

    /** @return record {@code i} of {@code thread}: a line of a length that varies, across block boundaries */
    private byte[] appendRecord(int thread, int i) {
        String line = "t" + thread + ":" + i + ":" + "x".repeat((thread * 977 + i * 131) % (blockSize() + 50)) + "\n";
        return line.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    @Test
    void disjointSubBlockWritesToOneFile() throws Exception {
        assumeCapable(Capability.RANDOM_WRITE, Capability.TRUNCATE);
        IomapFile file = create("/shared");
        int stripe = Math.max(blockSize() / THREADS, 1);
        int rounds = 4 * pageSize() / blockSize() + 8;
        long size = (long) rounds * blockSize();
        file.truncate(size);
        runConcurrently(THREADS, thread -> {
            for (int round = 0; round < rounds; round++) {
                long pos = (long) round * blockSize() + (long) thread * stripe;
                write(file, pos, TestData.pattern(thread, pos, stripe));
                if (round % 7 == thread) {
                    file.fdatasync();
                }
            }
        });
        byte[] model = new byte[(int) size];
        for (int thread = 0; thread < THREADS; thread++) {
            for (int round = 0; round < rounds; round++) {
                long pos = (long) round * blockSize() + (long) thread * stripe;
                model = apply(model, pos, TestData.pattern(thread, pos, stripe));
            }
        }
        assertContent(file, model);
        file.fsync();
        dropCache();
        assertContent(file, model);
        remountChecked();
        assertContent(open("/shared"), model);
    }

    @Test
    void writersOfTheirOwnFilesWithSyncAndCacheDrops() throws Exception {
        int appends = 60;
        // Appends of up to two pages each, or less where 60 of those would not fit in one file.
        int spread = (int) Math.min(2L * pageSize(), withinFileLimit(Long.MAX_VALUE) / 64);
        IomapFile[] files = new IomapFile[THREADS];
        for (int t = 0; t < THREADS; t++) {
            files[t] = create("/f" + t);
        }
        runConcurrently(THREADS + 1, thread -> {
            if (thread == THREADS) {
                for (int i = 0; i < 20; i++) {
                    fs.sync();
                    fs.dropCleanCache();
                }
                return;
            }
            IomapFile file = files[thread];
            long pos = 0;
            for (int i = 0; i < appends; i++) {
                int length = 100 + (i * 997 + thread * 31) % spread;
                write(file, pos, TestData.pattern(thread * 1000 + i, pos, length));
                pos += length;
                if (i % 10 == 0) {
                    file.fsync();
                }
            }
        });
        remountChecked();
        for (int t = 0; t < THREADS; t++) {
            byte[] model = new byte[0];
            for (int i = 0; i < appends; i++) {
                int length = 100 + (i * 997 + t * 31) % spread;
                model = apply(model, model.length, TestData.pattern(t * 1000 + i, model.length, length));
            }
            assertContent(open("/f" + t), model);
        }
    }

    @Test
    void readersSeeStableDataWhileAWriterExtendsTheFile() throws Exception {
        IomapFile file = create("/a");
        int stable = (int) Math.min(4L * pageSize() + 123, withinFileLimit(Long.MAX_VALUE) - 100_000);
        byte[] model = writePattern(file, 0, stable, 1);
        file.fsync();
        AtomicBoolean done = new AtomicBoolean();
        runConcurrently(THREADS, thread -> {
            if (thread == 0) {
                try {
                    long pos = stable;
                    for (int i = 0; i < 100; i++) {
                        write(file, pos, TestData.pattern(2, pos, 1000));
                        pos += 1000;
                        if (i % 20 == 0) {
                            fs.dropCleanCache();
                        }
                    }
                } finally {
                    done.set(true);
                }
                return;
            }
            Random random = new Random(thread);
            while (!done.get()) {
                int pos = random.nextInt(stable);
                int length = Math.min(stable - pos, 1 + random.nextInt(2 * pageSize()));
                byte[] got = read(file, pos, length);
                assertBytes(got, java.util.Arrays.copyOfRange(model, pos, pos + length), pos);
                assertThat(file.size()).isGreaterThanOrEqualTo(stable);
            }
        });
        assertThat(file.size()).isEqualTo(stable + 100_000L);
    }

    @Test
    void concurrentCreatesAndUnlinksInOneDirectory() throws Exception {
        int perThread = 40;
        runConcurrently(THREADS, thread -> {
            for (int i = 0; i < perThread; i++) {
                IomapFile file = fs.create("/t" + thread + "-" + i);
                write(file, 0, TestData.pattern(thread, 0, 100));
                file.close();
                if (i % 3 == 0) {
                    fs.unlink("/t" + thread + "-" + i);
                }
            }
        });
        List<String> expected = new ArrayList<>();
        for (int thread = 0; thread < THREADS; thread++) {
            for (int i = 0; i < perThread; i++) {
                if (i % 3 != 0) {
                    expected.add("t" + thread + "-" + i);
                }
            }
        }
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactlyInAnyOrderElementsOf(expected);
        remountChecked();
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactlyInAnyOrderElementsOf(expected);
    }

    @Test
    void mappedStoresRacingWritesAndWriteback() throws Exception {
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        int pages = (int) Math.min(8, withinFileLimit(Long.MAX_VALUE) / pageSize());
        byte[] initial = writePattern(file, 0, pages * pageSize(), 1);
        runConcurrently(THREADS, thread -> {
            for (int round = 0; round < 30; round++) {
                int page = (thread + round * THREADS) % pages;
                long pos = (long) page * pageSize() + (long) thread * (pageSize() / THREADS);
                byte[] data = TestData.pattern(thread + 10, pos, 64);
                if (thread % 2 == 0) {
                    file.map().store(pos, java.nio.ByteBuffer.wrap(data));
                } else {
                    write(file, pos, data);
                }
                if (round % 5 == thread) {
                    file.fdatasync();
                }
            }
        });
        byte[] model = initial;
        for (int thread = 0; thread < THREADS; thread++) {
            for (int round = 0; round < 30; round++) {
                int page = (thread + round * THREADS) % pages;
                long pos = (long) page * pageSize() + (long) thread * (pageSize() / THREADS);
                model = apply(model, pos, TestData.pattern(thread + 10, pos, 64));
            }
        }
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void writersAndReadersUnderMemoryPressure() throws Exception {
        assumeCapable(Capability.RANDOM_WRITE);
        fs.close();
        fs = kit().underMemoryPressure().mount(device);
        int length = (int) Math.min(Math.min(4 * maxFolioSize(), 4 << 20),
                withinFileLimit(Long.MAX_VALUE) - 3L * blockSize());
        IomapFile[] files = new IomapFile[THREADS];
        for (int t = 0; t < THREADS; t++) {
            files[t] = create("/p" + t);
        }
        runConcurrently(THREADS, thread -> {
            IomapFile file = files[thread];
            Random random = new Random(thread);
            byte[] model = new byte[0];
            for (int i = 0; i < 200; i++) {
                long pos = random.nextInt(length);
                int len = 1 + random.nextInt(3 * blockSize());
                model = apply(model, pos, writePattern(file, pos, len, thread * 1000L + i));
                int at = random.nextInt(model.length);
                int n = Math.min(model.length - at, 1 + random.nextInt(2 * pageSize()));
                assertBytes(read(file, at, n), java.util.Arrays.copyOfRange(model, at, at + n), at);
            }
            assertContent(file, model);
        });
        remountChecked();
    }

    @Test
    void backgroundWritebackKeepsUpWithWriters() throws Exception {
        fs.close();
        fs = kit().mount(device, true);
        IomapFile[] files = new IomapFile[THREADS];
        for (int t = 0; t < THREADS; t++) {
            files[t] = create("/bg" + t);
        }
        int length = (int) (withinFileLimit(1 << 20) / 8192 * 8192);
        runConcurrently(THREADS, thread -> {
            for (long pos = 0; pos < length; pos += 8192) {
                write(files[thread], pos, TestData.pattern(thread, pos, 8192));
            }
        });
        remountChecked();
        for (int t = 0; t < THREADS; t++) {
            assertContent(open("/bg" + t), TestData.pattern(t, 0, length));
        }
    }
}
