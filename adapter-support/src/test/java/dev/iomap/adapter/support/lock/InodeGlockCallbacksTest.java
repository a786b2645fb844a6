package dev.iomap.adapter.support.lock;

import static dev.iomap.spi.lock.LockMode.EX;
import static dev.iomap.spi.lock.LockMode.SH;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.spi.DelallocPunch;
import dev.iomap.spi.DirtyCacheException;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.lock.DemoteFailedException;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.lock.LockStats;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The inode glock callbacks driven by the in-process manager, over inodes that record their calls. */
class InodeGlockCallbacksTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final LockName INODE = LockName.inode(12);

    private final List<String> events = RecordingCallbacks.newEventList();
    private final InProcessLockSpace space = new InProcessLockSpace();

    /** A node's view of inode 12: records writeback and invalidation, reports {@code pages}. */
    private final class RecordingInode implements IomapInode {
        private final String node;
        private final long pages;
        volatile boolean dirty;

        RecordingInode(String node, long pages) {
            this.node = node;
            this.pages = pages;
        }

        @Override
        public long ino() {
            return 12;
        }

        @Override
        public long size() {
            return pages * 4096;
        }

        @Override
        public int blockSize() {
            return 4096;
        }

        @Override
        public void releaseDelalloc(long pos, long length, long written, DelallocPunch punch) {
            throw new UnsupportedOperationException("no delalloc in these tests");
        }

        @Override
        public void writeAndWait(long start, long end) {
            events.add(node + ".writeAndWait " + start + ".." + end);
        }

        @Override
        public long invalidateCache() {
            if (dirty) {
                throw new DirtyCacheException(12, 1, 0);
            }
            events.add(node + ".invalidateCache");
            return pages;
        }

        @Override
        public void shrinkSizeAfterLostWrite(long size) {
            throw new UnsupportedOperationException("no lost writes in these tests");
        }
    }

    private InodeGlockCallbacks callbacks(String node, IomapInode inode) {
        return new InodeGlockCallbacks(ino -> inode, ino -> events.add(node + ".flushLog " + ino),
                ino -> events.add(node + ".dropMetadata " + ino));
    }

    @Test
    void sharedRequestsWriteBackTheWriterAndExclusiveOnesDropEverySharersCache() throws Exception {
        InProcessLockManager nodeA = new InProcessLockManager(space, "A", false);
        InProcessLockManager nodeB = new InProcessLockManager(space, "B", false);
        InProcessLockManager nodeC = new InProcessLockManager(space, "C", false);
        nodeA.acquire(INODE, EX, callbacks("A", new RecordingInode("A", 4)), WAIT).unlock();

        nodeB.acquire(INODE, SH, callbacks("B", new RecordingInode("B", 2)), WAIT).unlock();
        events.add("B granted SH");
        nodeC.acquire(INODE, EX, callbacks("C", new RecordingInode("C", 0)), WAIT);
        events.add("C granted EX");

        assertThat(events).containsExactly(
                "A.flushLog 12", "A.writeAndWait 0.." + Long.MAX_VALUE, "B granted SH",
                "A.dropMetadata 12", "A.invalidateCache", "B.dropMetadata 12", "B.invalidateCache",
                "C granted EX");
        assertThat(nodeA.stats()).isEqualTo(new LockStats(1, 0, 2, 0, 4));
        assertThat(nodeB.stats()).isEqualTo(new LockStats(1, 0, 1, 0, 2));
    }

    @Test
    void aDirtyCacheFailsTheDemotionAndTheHolderKeepsItsMode() throws Exception {
        InProcessLockManager nodeA = new InProcessLockManager(space, "A", false);
        InProcessLockManager nodeB = new InProcessLockManager(space, "B", false);
        RecordingInode inode = new RecordingInode("A", 4);
        LockHandle a = nodeA.acquire(INODE, EX, callbacks("A", inode), WAIT);
        a.unlock();
        inode.dirty = true;

        assertThatThrownBy(() -> nodeB.acquire(INODE, EX, callbacks("B", new RecordingInode("B", 0)), WAIT))
                .isInstanceOf(DemoteFailedException.class).hasCauseInstanceOf(DirtyCacheException.class);

        assertThat(a.mode()).isEqualTo(LockMode.EX);
        assertThat(events).containsExactly("A.flushLog 12", "A.writeAndWait 0.." + Long.MAX_VALUE,
                "A.dropMetadata 12");
        assertThat(nodeA.stats()).isEqualTo(new LockStats(1, 0, 0, 0, 0));
    }

    @Test
    void anInodeWithoutCacheStillFlushesTheLogAndDropsNothing() throws Exception {
        InodeGlockCallbacks uncached = new InodeGlockCallbacks(ino -> null,
                ino -> events.add("flushLog " + ino), ino -> events.add("dropMetadata " + ino));

        uncached.sync(INODE, EX, LockMode.UN);
        long pages = uncached.invalidate(INODE, EX, LockMode.UN);

        assertThat(pages).isZero();
        assertThat(events).containsExactly("flushLog 12", "dropMetadata 12");
        assertThatThrownBy(() -> uncached.sync(LockName.rgrp(12), EX, SH))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RGRP:12");
    }
}
