package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.lock.InProcessLockManager;
import dev.iomap.adapter.support.lock.InProcessLockSpace;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.DelallocPunch;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.lock.LockTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A mapping asked for with {@link IomapRequest#NOWAIT} (the core's readahead, which holds its folios
 * locked while it maps) takes the inode's glock only if the node holds it cached with no demotion
 * pending, and otherwise fails at once: it neither waits for a demotion (whose callbacks wait for the
 * folios the readahead holds: the deadlock {@code MultiNodeConcurrencyTest} once hung in) nor asks the
 * lock manager for a mode, which could run another node's demotion callbacks in its thread.
 */
class NowaitMappingTest {
    private static final int BLOCK = 4096;
    private static final Set<IomapRequest> NOWAIT = Set.of(IomapRequest.NOWAIT);
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final InProcessLockSpace space = new InProcessLockSpace();
    private final RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
    private final List<String> otherNodesCallbacks = new CopyOnWriteArrayList<>();
    private final DemoteCallbacks recording = new DemoteCallbacks() {
        @Override
        public void sync(LockName name, LockMode from, LockMode to) {
            otherNodesCallbacks.add("sync " + from + ">" + to);
        }

        @Override
        public long invalidate(LockName name, LockMode from, LockMode to) {
            otherNodesCallbacks.add("invalidate " + from + ">" + to);
            return 0;
        }
    };
    /** Threads of the test's own: the common pool may have one, which a waiting request would take. */
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private Gfs2LikeMount mount;

    @AfterEach
    void unmount() throws Exception {
        threads.shutdownNow();
        try {
            assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).as("test threads ended").isTrue();
            if (mount != null) {
                mount.unmount();
            }
        } finally {
            device.close();
        }
    }

    /** A node's view of one inode with nothing cached: what the mount's demotion callbacks reach. */
    private record Inode(long ino) implements IomapInode {
        @Override
        public long size() {
            return 0;
        }

        @Override
        public int blockSize() {
            return BLOCK;
        }

        @Override
        public void releaseDelalloc(long pos, long length, long written, DelallocPunch punch) {
            throw new UnsupportedOperationException("no delalloc on gfs2-like");
        }

        @Override
        public void writeAndWait(long start, long end) {
        }

        @Override
        public long invalidateCache() {
            return 0;
        }

        @Override
        public void shrinkSizeAfterLostWrite(long size) {
            throw new UnsupportedOperationException("no lost writes here");
        }
    }

    private IomapInode mountAndCreate() throws Exception {
        Gfs2LikeAdapter adapter = new Gfs2LikeAdapter(space);
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        mount = (Gfs2LikeMount) adapter.mount(device, MountOptions.defaults());
        return new Inode(mount.create(mount.rootIno(), "f", FileType.REGULAR));
    }

    /**
     * Maps the first block and ends the mapping, on a thread of the test's, so that a mapping that
     * waited fails the test instead of hanging it.
     *
     * @return the mapping's offset
     */
    private long map(IomapInode inode, Set<IomapRequest> request) throws Exception {
        return threads.submit(() -> {
            IomapMapping mapping = mount.iomapOps().begin(inode, 0, BLOCK, request);
            mount.iomapOps().end(inode, 0, BLOCK, 0, request, mapping.iomap());
            return mapping.iomap().offset();
        }).get(10, TimeUnit.SECONDS);
    }

    private static Throwable cause(ThrowingCall call) {
        try {
            call.run();
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return e;
        }
    }

    @FunctionalInterface
    private interface ThrowingCall {
        void run() throws Exception;
    }

    @Test
    void aCachedGlockServesANowaitMappingAndAnUncachedOneRefusesIt() throws Exception {
        IomapInode inode = mountAndCreate();
        mount.remember(inode);
        assertThat(mount.glocks.mode(inode.ino())).isEqualTo(LockMode.UN);
        assertThat(cause(() -> map(inode, NOWAIT))).as("nothing cached yet").isInstanceOf(LockTimeoutException.class);

        assertThat(map(inode, Set.of())).isZero();
        assertThat(mount.glocks.mode(inode.ino())).isEqualTo(LockMode.SH);
        assertThat(map(inode, NOWAIT)).as("served by the cached SH").isZero();
    }

    @Test
    void withoutTheGlockANowaitMappingFailsAtOnceAndRunsNoOtherNodesCallbacks() throws Exception {
        IomapInode inode = mountAndCreate();
        mount.remember(inode);
        try (InProcessLockManager other = new InProcessLockManager(space, "other node", false)) {
            LockHandle theirs = other.acquire(LockName.inode(inode.ino()), LockMode.EX, recording, WAIT);
            theirs.unlock();
            assertThat(mount.glocks.mode(inode.ino())).isEqualTo(LockMode.UN);

            assertThat(cause(() -> map(inode, NOWAIT))).isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("inode " + inode.ino());
            assertThat(otherNodesCallbacks).as("the other node keeps its EX").isEmpty();
            assertThat(theirs.mode()).isEqualTo(LockMode.EX);

            assertThat(map(inode, Set.of())).isZero();
            assertThat(otherNodesCallbacks).as("a mapping that may wait gets SH from the other node")
                    .containsExactly("sync EX>SH");
        }
    }

    @Test
    void aPendingDemotionMakesANowaitMappingFailAtOnceInsteadOfWaitingForIt() throws Exception {
        IomapInode inode = mountAndCreate();
        mount.remember(inode);
        mount.glocks.lock(inode.ino(), LockMode.SH); // a use in progress: the demotion must wait for it
        try (InProcessLockManager other = new InProcessLockManager(space, "other node", false)) {
            Future<LockHandle> theirs = threads.submit(
                    () -> other.acquire(LockName.inode(inode.ino()), LockMode.EX, recording, WAIT));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            Throwable refused = null;
            while (refused == null && System.nanoTime() < deadline) {
                // until the other node's request is queued, the cached SH still serves NOWAIT
                refused = cause(() -> map(inode, NOWAIT));
            }

            assertThat(refused).isInstanceOf(LockTimeoutException.class);
            assertThat(theirs).isNotDone();
            mount.glocks.unlock(inode.ino());
            theirs.get(10, TimeUnit.SECONDS).unlock();
        }
    }
}
