package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.core.CachedInode;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * fdatasync with nothing in the running transaction but times neither commits nor takes the metadata
 * lock; one with a change the data needs (a size update, an unwritten conversion) commits exactly once.
 */
class FdatasyncWithoutCommitTest {
    private static final int BLOCK = DirectMount.BLOCK;

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void anOverwriteNeedsNoCommitAndNoLockButAGrowingWriteCommitsOnce() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode inode = dm.create("f");
            DirectMount.write(inode, 0, pattern(1, 0, 4 * BLOCK));
            dm.fsync(inode);
            XfsVolume volume = dm.mount.volume();

            // an overwrite of written blocks inside the on-disk size: nothing for fdatasync to commit
            DirectMount.write(inode, BLOCK, pattern(2, BLOCK, BLOCK));
            inode.writeAndWait(0, Long.MAX_VALUE);
            long commits = volume.log.commits();
            try (HeldLock _ = new HeldLock(volume)) {
                dm.mount.fsync(inode, true);
            }
            assertThat(volume.log.commits()).isEqualTo(commits);

            // a write past the on-disk size: its size update must be committed, under the lock
            DirectMount.write(inode, 4 * BLOCK, pattern(3, 4 * BLOCK, BLOCK));
            inode.writeAndWait(0, Long.MAX_VALUE);
            CompletableFuture<Void> fdatasync;
            try (HeldLock _ = new HeldLock(volume)) {
                fdatasync = CompletableFuture.runAsync(() -> {
                    try {
                        dm.mount.fsync(inode, true);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                // it waits for the lock (it cannot finish before the holder lets go)
                while (!volume.metaLock.hasQueuedThreads() && !fdatasync.isDone()) {
                    Thread.onSpinWait();
                }
                assertThat(fdatasync).isNotDone();
            }
            fdatasync.get(30, TimeUnit.SECONDS);
            assertThat(volume.log.commits()).isEqualTo(commits + 1);

            // and then nothing is left: the next one commits nothing
            try (HeldLock _ = new HeldLock(volume)) {
                dm.mount.fsync(inode, true);
            }
            assertThat(volume.log.commits()).isEqualTo(commits + 1);
        }
    }

    /** Holds the volume's metadata lock in another thread until closed. */
    private static final class HeldLock implements AutoCloseable {
        private final CountDownLatch release = new CountDownLatch(1);
        private final Thread holder;

        HeldLock(XfsVolume volume) throws InterruptedException {
            CountDownLatch held = new CountDownLatch(1);
            holder = Thread.ofPlatform().start(() -> {
                volume.metaLock.lock();
                try {
                    held.countDown();
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    volume.metaLock.unlock();
                }
            });
            held.await();
        }

        @Override
        public void close() {
            release.countDown();
            boolean interrupted = false;
            while (true) {
                try {
                    holder.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
