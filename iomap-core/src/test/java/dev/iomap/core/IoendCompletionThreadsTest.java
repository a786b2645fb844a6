package dev.iomap.core;

import static dev.iomap.testkit.TestData.buffer;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.WritebackOps;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Ioend completion work runs on a bounded set of threads per cache (the kernel's completion workqueue
 * has a {@code max_active}): a burst of device completions queues instead of starting a thread each.
 */
class IoendCompletionThreadsTest {
    private static final int K4 = 4096;

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBurstOfCompletionsRunsOnAtMostTheBoundedThreads() throws Exception {
        int ioends = 4 * IomapCache.COMPLETION_THREADS;
        Queue<CompletableFuture<Void>> held = new ConcurrentLinkedQueue<>();
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        AtomicInteger completed = new AtomicInteger();
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        try (RamBlockDevice ram = new RamBlockDevice(K4, 64L << 20)) {
            // writes the data at once but completes each write only when the test says so
            BlockDevice device = new ForwardingBlockDevice(ram) {
                @Override
                public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
                    delegate.write(offset, srcs, purpose).join();
                    CompletableFuture<Void> completion = new CompletableFuture<>();
                    held.add(completion);
                    return completion;
                }
            };
            MapBlocksWriteback writeback = new MapBlocksWriteback() {
                @Override
                public Iomap mapBlocks(IomapInode inode, long pos, long length) {
                    return Iomap.mapped(pos, length, pos);
                }

                @Override
                public void ioendCompleted(IomapInode inode, IoendCompletion completion) throws java.io.IOException {
                    threads.add(Thread.currentThread());
                    mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException("interrupted in ioendCompleted");
                    } finally {
                        running.decrementAndGet();
                        completed.incrementAndGet();
                    }
                }
            };
            IomapCache cache = new IomapCache(PageCacheOptions.builder().maxIoendBytes(K4).build(), device);
            try {
                CachedInode inode = cache.addInode(1, K4, 32L << 20, 32L << 20, new BlockDeviceMapping(device),
                        writeback);
                OpenFile file = inode.open();
                for (int i = 0; i < ioends; i++) {
                    file.write((long) i * 2 * K4, buffer(i, (long) i * 2 * K4, K4));
                }
                inode.writeback(0, Long.MAX_VALUE, false);
                assertThat(held).as("ioends in flight").hasSize(ioends);

                // Every device write completes now, in this thread: each hands its completion work over.
                held.forEach(write -> write.complete(null));
                ThreadPoolExecutor pool = (ThreadPoolExecutor) cache.completionExecutor();
                assertThat(pool.getPoolSize()).as("completion threads started for %d ioends", ioends)
                        .isEqualTo(IomapCache.COMPLETION_THREADS);
                assertThat(pool.getQueue()).as("completion work waiting").hasSize(ioends - IomapCache.COMPLETION_THREADS);

                while (running.get() < IomapCache.COMPLETION_THREADS) {
                    Thread.onSpinWait();
                }
                release.countDown();
                inode.writeAndWait(0, Long.MAX_VALUE);
                assertThat(completed).as("ioends completed").hasValue(ioends);
                assertThat(mostAtOnce.get()).as("completions running at once")
                        .isEqualTo(IomapCache.COMPLETION_THREADS);
                assertThat(threads).as("threads that ran completion work").hasSize(IomapCache.COMPLETION_THREADS);
            } finally {
                release.countDown();
                cache.close();
            }
        }
    }
}
