package dev.iomap.cluster;

import dev.iomap.devices.LoopbackPorts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.ClusterSpec;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35 item 13: the ZooKeeper server ({@link EmbeddedZooKeeper}, the one {@code iomap zookeeper}
 * runs) stops and starts again on the same port with its data kept, under two gfs2-like nodes that
 * joined through the {@code zk} provider (its real 10 s sessions, leases and retries). An outage shorter
 * than the lease fences nobody: a node writes and fsyncs under its lease meanwhile, an operation that
 * needs ZooKeeper waits and then goes on, and both nodes carry on after. An outage longer than the
 * session fences both for good, and an operation caught waiting in it fails, typed, instead of hanging.
 */
class ZkOutageTest {
    private static final int BLOCK = 4096;
    private static final int SIZE = 2 * BLOCK + 99;

    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void anOutageShorterThanTheLeaseFencesNobodyAndOperationsGoOnAfter() throws Exception {
        RamBlockDevice device = formatted();
        Path data = dir.resolve("zk");
        int port = LoopbackPorts.reserve();
        EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(data, port);
        try {
            IomapFileSystem a = mount(device, zk, "a");
            IomapFileSystem b = mount(device, zk, "b");
            writeAndFsync(a, "/shared", pattern(1));
            assertThat(readAll(b, "/shared")).as("B reads A's file").isEqualTo(pattern(1));
            writeAndFsync(a, "/mine", pattern(2));

            zk.close();
            writeAndFsync(a, "/mine", pattern(3));   // its glock is cached: no ZooKeeper needed, the lease is valid
            CompletableFuture<byte[]> waiting = CompletableFuture.supplyAsync(() -> readUnchecked(b, "/mine"));
            Thread.sleep(1000);   // B's read waits for A's glock, which needs ZooKeeper
            assertThat(waiting).as("B's read waits for ZooKeeper").isNotDone();
            zk = EmbeddedZooKeeper.start(data, port);

            assertThat(waiting.get(60, TimeUnit.SECONDS)).as("B's read after ZooKeeper came back")
                    .isEqualTo(pattern(3));
            writeAndFsync(b, "/after", pattern(4));
            assertThat(readAll(a, "/after")).as("A reads B's file written after the outage").isEqualTo(pattern(4));
            writeAndFsync(a, "/shared", pattern(5));
            assertThat(readAll(b, "/shared")).as("B reads A's overwrite after the outage").isEqualTo(pattern(5));
            a.close();
            b.close();
        } finally {
            zk.close();
        }
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("fsck").isEmpty();
    }

    @Test
    @Timeout(120)
    void anOutageLongerThanTheSessionFencesTheNodesAndAWaitingOperationFailsTypedWithinTheSession()
            throws Exception {
        RamBlockDevice device = formatted();
        Path data = dir.resolve("zk");
        int port = LoopbackPorts.reserve();
        EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(data, port);
        try {
            IomapFileSystem a = mount(device, zk, "a");
            IomapFileSystem b = mount(device, zk, "b");
            writeAndFsync(b, "/theirs", pattern(1));

            zk.close();
            long stopped = System.nanoTime();
            CompletableFuture<byte[]> waiting = CompletableFuture.supplyAsync(() -> readUnchecked(a, "/theirs"));
            ExecutionException failed = (ExecutionException) catchThrowable(() -> waiting.get(60, TimeUnit.SECONDS));
            long waited = System.nanoTime() - stopped;

            assertThat(failed).as("A's read of B's file while ZooKeeper is away").isNotNull();
            assertThat(fenceError(failed)).as("what A's read failed with: " + failed.getCause())
                    .isInstanceOfAny(LeaseExpiredException.class, NodeFencedException.class);
            Duration bound = ZkClusterJoinProvider.SESSION_TIMEOUT.plus(ZkClusterJoinProvider.RECOVERY_MARGIN);
            assertThat(Duration.ofNanos(waited)).as("A's read failed rather than wait past the session timeout")
                    .isLessThan(bound);
            ZkTestServer.await("A fences itself", () -> fenced(a));
            ZkTestServer.await("B fences itself", () -> fenced(b));

            zk = EmbeddedZooKeeper.start(data, port);
            Thread.sleep(2000);   // the clients reconnect, with new sessions
            assertThatThrownBy(() -> writeAndFsync(a, "/theirs", pattern(2))).as("A after ZooKeeper came back")
                    .satisfies(e -> assertThat(fenceError(e)).isInstanceOf(NodeFencedException.class));
            closeFenced(a);
            closeFenced(b);
        } finally {
            zk.close();
        }
    }

    /** Unmounts a fenced node: it may fail, and then only with the fence's error. */
    private static void closeFenced(IomapFileSystem fs) {
        try {
            fs.close();
        } catch (IOException e) {
            assertThat(fenceError(e)).as("unmounting a fenced node failed with " + e).isInstanceOf(NodeFencedException.class);
        }
    }

    private static boolean fenced(IomapFileSystem fs) {
        try {
            writeAndFsync(fs, "/probe-" + System.nanoTime(), pattern(9));
            return false;
        } catch (IOException e) {
            return fenceError(e) instanceof NodeFencedException;
        }
    }

    /** @return the first {@link LeaseExpiredException} or {@link NodeFencedException} in the cause chain, or null */
    private static Throwable fenceError(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof LeaseExpiredException || t instanceof NodeFencedException) {
                return t;
            }
        }
        return null;
    }

    private static Throwable catchThrowable(ThrowingRunnable runnable) {
        try {
            runnable.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static RamBlockDevice formatted() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "outage", Map.of("journals", "3")));
        return device;
    }

    private static IomapFileSystem mount(RamBlockDevice device, EmbeddedZooKeeper zk, String nodeId)
            throws IOException {
        ClusterSpec cluster = ClusterSpec.parse("zk=" + zk.connectString()).withNodeId(nodeId);
        return CoreRuntime.mount(new Gfs2LikeAdapter(), device,
                new MountOptions(PageCacheOptions.defaults(), false).withCluster(cluster));
    }

    /** Writes {@code bytes} at the start of {@code path} (created if new) and fsyncs it. */
    private static void writeAndFsync(IomapFileSystem fs, String path, byte[] bytes) throws IOException {
        try (IomapFile file = openOrCreate(fs, path)) {
            Gfs2ZkFenceTest.write(file, 0, bytes);
            file.fsync();
        }
    }

    private static IomapFile openOrCreate(IomapFileSystem fs, String path) throws IOException {
        try {
            return fs.open(path);
        } catch (java.nio.file.NoSuchFileException e) {
            return fs.create(path);
        }
    }

    private static byte[] readAll(IomapFileSystem fs, String path) throws IOException {
        return Gfs2ZkFenceTest.readAll(fs, path);
    }

    /** {@link #readAll} for a future: its failure becomes the future's. */
    private static byte[] readUnchecked(IomapFileSystem fs, String path) {
        try {
            return readAll(fs, path);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static byte[] pattern(int seed) {
        return Gfs2ZkFenceTest.pattern(seed, SIZE);
    }

}
