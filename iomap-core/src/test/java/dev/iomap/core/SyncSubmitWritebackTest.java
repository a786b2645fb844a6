package dev.iomap.core;

import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.SyncSubmit;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.WritebackOps;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The last ioend of a data-integrity writeback (fsync) is submitted under {@link SyncSubmit#run}, so a
 * device that honours it writes and completes it in the fsync caller's thread; every other write keeps
 * going to the device's own thread.
 */
class SyncSubmitWritebackTest {
    private static final int K4 = 4096;

    /** A write as the device saw it: where, from which thread, and whether the caller said it waits. */
    record Seen(long offset, Thread thread, boolean callerWaits) {
    }

    /** Completion work as the adapter saw it. */
    record Completed(long offset, Thread thread) {
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void fsyncOfOneIoendWritesAndCompletesItInTheCallersThreadWithOneFlush() throws Exception {
        try (Rig rig = new Rig(false)) {
            rig.file.write(3 * K4, buffer(1, 3 * K4, K4));
            long flushesBefore = rig.ram.stats().flushes();

            rig.file.fsync();

            Thread me = Thread.currentThread();
            assertThat(rig.seen).containsExactly(new Seen(3 * K4, me, true));
            assertThat(rig.completed).as("completion work ran in the caller, right after the write")
                    .containsExactly(new Completed(3 * K4, me));
            assertThat(rig.ram.stats().flushes() - flushesBefore).isEqualTo(1);
            assertThat(rig.ram.stats().writes()).isEqualTo(1);
            assertThat(readDevice(rig.ram, 3 * K4, K4)).isEqualTo(pattern(1, 3 * K4, K4));
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void anIoendThatNeedsNoCompletionWorkSkipsItInTheCallerToo() throws Exception {
        try (Rig rig = new Rig(true)) {
            rig.file.write(0, buffer(2, 0, K4));
            rig.file.fsync();

            assertThat(rig.seen).containsExactly(new Seen(0, Thread.currentThread(), true));
            assertThat(rig.completed).isEmpty();
            assertThat(readDevice(rig.ram, 0, K4)).isEqualTo(pattern(2, 0, K4));
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void onlyTheLastIoendOfAnFsyncIsSubmittedInline() throws Exception {
        try (Rig rig = new Rig(true)) {
            for (int i = 0; i < 3; i++) {
                rig.file.write((long) i * 2 * K4, buffer(i, (long) i * 2 * K4, K4));
            }
            rig.file.fsync();

            // the first two were recorded on the device thread, possibly after the inline third
            assertThat(rig.seen).containsExactlyInAnyOrder(
                    new Seen(0, rig.deviceThread, false),
                    new Seen(2 * K4, rig.deviceThread, false),
                    new Seen(4 * K4, Thread.currentThread(), true));
            for (int i = 0; i < 3; i++) {
                assertThat(readDevice(rig.ram, (long) i * 2 * K4, K4)).isEqualTo(pattern(i, (long) i * 2 * K4, K4));
            }
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void backgroundWritebackNeverAsksForInlineWrites() throws Exception {
        try (Rig rig = new Rig(true)) {
            rig.file.write(0, buffer(3, 0, K4));
            rig.inode.writeback(0, Long.MAX_VALUE, false);
            rig.file.fsync(); // waits for it

            assertThat(rig.seen).hasSize(1);
            assertThat(rig.seen.getFirst().callerWaits()).isFalse();
            assertThat(rig.seen.getFirst().thread()).isSameAs(rig.deviceThread);
        }
    }

    /**
     * A RAM device behind a wrapper that records every write and completes it on a device thread of its
     * own, unless the caller waits ({@link SyncSubmit#callerWaits()}): then at once, in the caller.
     */
    private static final class Rig implements AutoCloseable {
        final ExecutorService deviceExecutor = Executors.newSingleThreadExecutor();
        final Thread deviceThread;
        final RamBlockDevice ram = new RamBlockDevice(K4, 64L << 20);
        final List<Seen> seen = new CopyOnWriteArrayList<>();
        final List<Completed> completed = new CopyOnWriteArrayList<>();
        final IomapCache cache;
        final CachedInode inode;
        final OpenFile file;

        Rig(boolean noCompletionWork) throws Exception {
            deviceThread = deviceExecutor.submit(Thread::currentThread).get();
            BlockDevice device = new ForwardingBlockDevice(ram) {
                @Override
                public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
                    List<ByteBuffer> data = srcs.stream().map(ByteBuffer::duplicate).toList();
                    if (SyncSubmit.callerWaits()) {
                        seen.add(new Seen(offset, Thread.currentThread(), true));
                        return delegate.write(offset, data, purpose);
                    }
                    return CompletableFuture.runAsync(() -> {
                        seen.add(new Seen(offset, Thread.currentThread(), SyncSubmit.callerWaits()));
                        delegate.write(offset, data, purpose).join();
                    }, deviceExecutor);
                }
            };
            MapBlocksWriteback writeback = new MapBlocksWriteback() {
                @Override
                public Iomap mapBlocks(IomapInode inode, long pos, long length) {
                    return Iomap.mapped(pos, length, pos);
                }

                @Override
                public boolean completesWithoutWork(IomapInode inode, IoendCompletion completion) {
                    return noCompletionWork;
                }

                @Override
                public void ioendCompleted(IomapInode inode, IoendCompletion completion) {
                    completed.add(new Completed(completion.offset(), Thread.currentThread()));
                }
            };
            cache = new IomapCache(PageCacheOptions.builder().maxIoendBytes(K4).build(), device);
            inode = cache.addInode(1, K4, 32L << 20, 32L << 20, new BlockDeviceMapping(device), writeback);
            file = inode.open();
        }

        @Override
        public void close() throws java.io.IOException {
            try {
                cache.close();
                ram.close();
            } finally {
                deviceExecutor.shutdownNow();
            }
        }
    }
}
