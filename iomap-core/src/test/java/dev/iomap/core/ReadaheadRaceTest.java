package dev.iomap.core;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.DirtyCacheException;
import dev.iomap.spi.IomapType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Sequential readers, whose readahead runs on the cache's real threads, race a writer, a truncate
 * that cuts the file's last MiB and grows it back, and cache drops with writeback. A read holds the
 * inode lock shared, so each read sees one state of the file, and every page it returns must be one
 * the file could hold: the original bytes (only below the cut, since the cut zeroes the rest and the
 * device keeps the old bytes there until writeback) or one whole-page write, or zeroes. A readahead
 * that read stale device bytes into the cut, or over a written page, would show the original pattern
 * where it cannot be.
 */
class ReadaheadRaceTest {
    private static final int PAGE = 4096;
    private static final long MIB = 1L << 20;
    private static final long SIZE = 4 * MIB;
    private static final long CUT = 3 * MIB;
    private static final long SEED = 11;

    @Test
    void readersSeeOnlyPossibleBytesWhileWritesTruncatesAndDropsRaceReadahead() throws Exception {
        RamBlockDevice device = new RamBlockDevice(PAGE, 16 * MIB);
        device.write(0, ByteBuffer.wrap(pattern(SEED, 0, (int) SIZE)), IoPurpose.DATA).join();
        ExtentTestOps ops = new ExtentTestOps(PAGE);
        ops.set(0, SIZE / PAGE, IomapType.MAPPED);
        PageCacheOptions options = PageCacheOptions.builder().cacheBudgetBytes(8 * MIB)
                .maxReadaheadBytes(MIB).build();
        try (IomapCache cache = new IomapCache(options, device)) {
            CachedInode inode = cache.addInode(1, PAGE, SIZE, 1L << 40, ops, ops);
            inode.truncate(CUT, null);
            inode.truncate(SIZE, null);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                OpenFile file = inode.open();
                int chunk = r == 0 ? 64 * 1024 : 1 << 20;
                threads.add(worker(failures, deadline, () -> readAndCheck(file, chunk)));
            }
            Random random = new Random(5);
            threads.add(worker(failures, deadline, () -> {
                long page = random.nextLong(SIZE / PAGE);
                byte[] bytes = new byte[PAGE];
                Arrays.fill(bytes, (byte) (1 + random.nextInt(126)));
                inode.open().write(page * PAGE, ByteBuffer.wrap(bytes));
            }));
            threads.add(worker(failures, deadline, () -> {
                inode.truncate(CUT, null);
                inode.truncate(SIZE, null);
                Thread.sleep(2);
            }));
            threads.add(worker(failures, deadline, () -> {
                inode.writeAndWait(0, Long.MAX_VALUE);
                try {
                    inode.invalidateCache();
                } catch (DirtyCacheException e) {
                    // written again since the writeback: what was clean is dropped anyway
                }
                Thread.sleep(1);
            }));
            threads.forEach(Thread::start);
            for (Thread thread : threads) {
                thread.join();
            }
            cache.awaitReadahead();

            assertThat(failures).isEmpty();
            assertThat(cache.readaheadStats().asyncWindows()).as("readahead ran").isPositive();
        }
    }

    private interface Step {
        void run() throws Exception;
    }

    private static Thread worker(ConcurrentLinkedQueue<Throwable> failures, long deadline, Step step) {
        return new Thread(() -> {
            try {
                while (System.nanoTime() < deadline && failures.isEmpty()) {
                    step.run();
                }
            } catch (Throwable e) {
                failures.add(e);
            }
        });
    }

    private static void readAndCheck(OpenFile file, int chunk) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(chunk);
        for (long pos = 0; pos < SIZE; pos += chunk) {
            dst.clear();
            int n = file.read(pos, dst);
            for (int offset = 0; offset < n; offset += PAGE) {
                byte[] page = Arrays.copyOfRange(dst.array(), offset, Math.min(n, offset + PAGE));
                long at = pos + offset;
                boolean original = at < CUT && Arrays.equals(page, pattern(SEED, at, page.length));
                boolean uniform = true;
                for (byte b : page) {
                    uniform &= b == page[0];
                }
                if (!original && !uniform) {
                    throw new AssertionError("page at " + at + " holds bytes the file never had: "
                            + Arrays.toString(Arrays.copyOf(page, 8)));
                }
            }
        }
    }
}
