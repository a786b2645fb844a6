package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Eight threads write, read, truncate, zero and store through mappings on four shared files while
 * the flusher writes back and reclaim keeps a cache far smaller than the data. Each file's model is
 * updated under the same lock as the operation, so the final contents must equal it exactly, through
 * this cache and through a cold one. Seed: {@code -Diomap.test.seed}; operations per thread:
 * {@code -Diomap.stress.ops} (short by default).
 */
class ConcurrencyStressTest {
    private static final long SEED = Long.getLong("iomap.test.seed", 0);
    private static final int OPS = Integer.getInteger("iomap.stress.ops", 400);
    private static final int THREADS = 8;
    private static final int FILES = 4;
    private static final int K1 = 1024;
    private static final int SPAN = 2 << 20;
    private static final long FILE_AREA = 8L << 20;

    /** One file, its adapter and its model. */
    private static final class Shared {
        final SparseTestOps ops;
        final CachedInode inode;
        final OpenFile file;
        final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
        final byte[] model = new byte[SPAN + 512 * K1];
        long size;

        Shared(IomapCache cache, int index) {
            ops = new SparseTestOps(K1, index * FILE_AREA);
            inode = cache.addInode(index + 1, K1, 0, FILE_AREA, ops, ops);
            file = inode.open();
        }
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void concurrentOperationsUnderMemoryPressureMatchTheModel() throws Exception {
        RamBlockDevice device = new RamBlockDevice(K1, FILES * FILE_AREA);
        PageCacheOptions options = PageCacheOptions.builder().maxFolioOrder(3)
                .cacheBudgetBytes(256 * K1).dirtyBackgroundBytes(64 * K1).dirtyLimitBytes(128 * K1)
                .dirtyExpire(Duration.ofMillis(50)).writebackInterval(Duration.ofMillis(10)).build();
        IomapCache cache = new IomapCache(options, device);
        cache.startBackgroundWriteback();
        Shared[] files = new Shared[FILES];
        for (int i = 0; i < FILES; i++) {
            files[i] = new Shared(cache, i);
        }
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Random random = new Random(SEED * 1_000_003 + t);
            threads.add(Thread.ofPlatform().name("stress-" + t).start(() -> {
                try {
                    for (int op = 0; op < OPS && failures.isEmpty(); op++) {
                        step(cache, files[random.nextInt(FILES)], random);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(failures).isEmpty();

        cache.syncAll();
        for (Shared shared : files) {
            assertThat(shared.inode.size()).isEqualTo(shared.size);
            assertThat(readAll(shared.file, shared.size)).isEqualTo(Arrays.copyOf(shared.model, (int) shared.size));
        }
        cache.close();
        IomapCache cold = new IomapCache(options, device);
        for (int i = 0; i < FILES; i++) {
            Shared shared = files[i];
            OpenFile file = cold.addInode(i + 1, K1, shared.size, FILE_AREA, shared.ops, shared.ops).open();
            assertThat(readAll(file, shared.size)).as("file %d after remount", i)
                    .isEqualTo(Arrays.copyOf(shared.model, (int) shared.size));
        }
        assertThat(cache.stats().ioends()).isPositive();
    }

    private static void step(IomapCache cache, Shared shared, Random random) throws Exception {
        int choice = random.nextInt(100);
        if (choice < 40) {
            exclusive(shared, () -> write(shared, random));
        } else if (choice < 65) {
            shared.lock.readLock().lock();
            try {
                checkRead(shared, random);
            } finally {
                shared.lock.readLock().unlock();
            }
        } else if (choice < 75) {
            exclusive(shared, () -> truncate(shared, random));
        } else if (choice < 85) {
            exclusive(shared, () -> zero(shared, random));
        } else if (choice < 90) {
            exclusive(shared, () -> store(shared, random));
        } else if (choice < 95) {
            shared.file.fsync();
        } else {
            cache.dropCleanCache();
        }
    }

    private static void exclusive(Shared shared, IoRunnable action) throws Exception {
        shared.lock.writeLock().lock();
        try {
            action.run();
        } finally {
            shared.lock.writeLock().unlock();
        }
    }

    private static void write(Shared shared, Random random) throws java.io.IOException {
        int pos = random.nextInt(SPAN);
        byte[] bytes = new byte[1 + random.nextInt(64 * K1)];
        random.nextBytes(bytes);
        shared.file.write(pos, ByteBuffer.wrap(bytes));
        System.arraycopy(bytes, 0, shared.model, pos, bytes.length);
        shared.size = Math.max(shared.size, pos + bytes.length);
    }

    private static void truncate(Shared shared, Random random) throws java.io.IOException {
        long newSize = random.nextInt(SPAN + 256 * K1);
        shared.inode.truncate(newSize, () -> shared.ops.truncateBlocks(newSize));
        if (newSize < shared.size) {
            Arrays.fill(shared.model, (int) newSize, (int) shared.size, (byte) 0);
        }
        shared.size = newSize;
    }

    private static void zero(Shared shared, Random random) throws java.io.IOException {
        int pos = random.nextInt(SPAN);
        int length = 1 + random.nextInt(128 * K1);
        shared.inode.zeroRange(pos, length);
        int end = (int) Math.min(shared.size, pos + length);
        if (end > pos) {
            Arrays.fill(shared.model, pos, end, (byte) 0);
        }
    }

    private static void store(Shared shared, Random random) throws java.io.IOException {
        if (shared.size == 0) {
            return;
        }
        int pos = random.nextInt((int) shared.size);
        byte[] bytes = new byte[1 + random.nextInt((int) Math.min(8 * K1, shared.size - pos))];
        random.nextBytes(bytes);
        shared.inode.map().store(pos, ByteBuffer.wrap(bytes));
        System.arraycopy(bytes, 0, shared.model, pos, bytes.length);
    }

    private static void checkRead(Shared shared, Random random) throws Exception {
        int pos = random.nextInt(SPAN);
        int length = 1 + random.nextInt(64 * K1);
        ByteBuffer dst = ByteBuffer.allocate(length);
        int n = shared.file.read(pos, dst);
        int expected = (int) Math.max(-1, Math.min(length, shared.size - pos));
        if (pos >= shared.size) {
            expected = -1;
        }
        assertThat(n).as("bytes read at %d", pos).isEqualTo(expected);
        if (n > 0) {
            assertThat(Arrays.copyOf(dst.array(), n)).as("read at %d", pos)
                    .isEqualTo(Arrays.copyOfRange(shared.model, pos, pos + n));
        }
    }

    private static byte[] readAll(OpenFile file, long size) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate((int) size);
        while (dst.hasRemaining()) {
            if (file.read(dst.position(), dst) < 0) {
                break;
            }
        }
        return dst.array();
    }
}
