package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.ClusterSpec;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * gfs2-like cluster mounts on a three-server ZooKeeper ensemble ({@link ZooKeeperEnsemble}), mounted
 * through the Java API with the ensemble's whole connect string ({@code zk=H:P,H:P,H:P}): the loss of
 * one server leaves the nodes writing and coherent; without a quorum no fsync succeeds, and nothing
 * fsync'd before is lost. Every node is unmounted and the ensemble stopped after each test.
 */
@Timeout(300)
class Gfs2ZkEnsembleTest {
    private static final int BLOCK = 4096;
    /** How often a node is mounted again to leave one follower without clients; see the first test. */
    private static final int REMOUNTS = 30;

    @TempDir
    Path dir;

    private ZooKeeperEnsemble ensemble;
    private RamBlockDevice device;
    private final List<IomapFileSystem> mounted = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        ensemble = ZooKeeperEnsemble.start(dir, ZooKeeperEnsembleTest.freeServers());
        device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "ensemble", Map.of("journals", "3")));
    }

    @AfterEach
    void stop() {
        try {
            unmountAll(true);
        } finally {
            ensemble.close();
        }
    }

    /**
     * Two nodes write, fsync and read each other's files; one follower that neither node's client is
     * connected to stops (a node is mounted again, with a new client, until one is free of clients); the
     * ensemble keeps its quorum, and the nodes go on exactly as before. (A server a node's client is
     * connected to is another matter: its client moves to another server, and today's fence trips on the
     * disconnect; see the design notes, issue 40.)
     */
    @Test
    void twoNodesKeepWritingAndStayCoherentWhenOneServerOfThreeStops() throws Exception {
        IomapFileSystem a = node("node-a");
        IomapFileSystem b = node("node-b");
        int idle = idleFollower();
        for (int tries = 0; idle == 0 && tries < REMOUNTS; tries++) {
            mounted.remove(b);
            b.close();
            b = node("node-b");
            idle = idleFollower();
        }
        assertThat(idle).as("a follower without the nodes' clients, after " + REMOUNTS + " remounts").isPositive();
        exchange(a, b, 0);

        ensemble.stop(idle);

        assertThat(ensemble.role(idle)).isEqualTo("stopped");
        for (int round = 1; round <= 3; round++) {
            exchange(a, b, round);
        }
        unmountAll(false);
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("fsck after both unmounted").isEmpty();
    }

    /**
     * Two servers of three stop: the last one has no quorum and serves nobody. A node's write and fsync
     * started then does not succeed while the quorum is gone (today the fence trips at the disconnect and
     * it fails; a lease that waits would block it instead). Once the servers are back, a new node mounts
     * and reads every byte fsync'd before the loss, and the fsync's own bytes if and only if it succeeded.
     */
    @Test
    void withoutAQuorumNoFsyncSucceedsAndNothingFsyncedBeforeIsLost() throws Exception {
        IomapFileSystem a = node("node-a");
        IomapFileSystem b = node("node-b");
        byte[] fromA = pattern(1, 3 * BLOCK + 17);
        byte[] fromB = pattern(2, 2 * BLOCK + 5);
        writeAndFsync(a, "/from-a", fromA);
        writeAndFsync(b, "/from-b", fromB);

        int leader = ZooKeeperEnsembleTest.leader(ensemble);
        List<Integer> stopped = ensemble.servers().stream().map(EnsembleServer::id).filter(id -> id != leader)
                .toList();
        stopped.forEach(ensemble::stop);
        byte[] late = pattern(3, BLOCK + 9);
        CompletableFuture<Void> withoutQuorum = CompletableFuture.runAsync(() -> {
            try {
                writeAndFsync(a, "/late", late);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Thread.sleep(3000);
        assertThat(withoutQuorum.isDone() && !withoutQuorum.isCompletedExceptionally())
                .as("an fsync succeeded without a quorum").isFalse();

        for (int id : stopped) {
            ensemble.restart(id);
        }
        ensemble.awaitQuorum(ZooKeeperEnsemble.START_TIMEOUT);
        boolean lateFsynced = fsyncOutcome(withoutQuorum);
        unmountAll(true);

        IomapFileSystem c = node("node-c");
        assertThat(read(c, "/from-a")).as("node A's bytes fsync'd before the loss").isEqualTo(fromA);
        assertThat(read(c, "/from-b")).as("node B's bytes fsync'd before the loss").isEqualTo(fromB);
        if (lateFsynced) {
            assertThat(read(c, "/late")).as("the bytes of the fsync that succeeded after the quorum came back")
                    .isEqualTo(late);
        }
        unmountAll(false);
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("fsck after every node unmounted").isEmpty();
    }

    /** @return whether the fsync attempted without a quorum finally succeeded (waiting up to 60 s for it) */
    private static boolean fsyncOutcome(CompletableFuture<Void> attempt) throws InterruptedException {
        try {
            attempt.get(60, TimeUnit.SECONDS);
            return true;
        } catch (java.util.concurrent.ExecutionException e) {
            return false;
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the fsync attempted without a quorum neither failed nor finished within 60 s"
                    + " after the quorum came back", e);
        }
    }

    /** @return a follower no client is connected to, or 0 if there is none */
    private int idleFollower() {
        return ensemble.servers().stream().mapToInt(EnsembleServer::id)
                .filter(id -> ensemble.role(id).equals("following") && ensemble.clientConnections(id) == 0)
                .findFirst().orElse(0);
    }

    /** Each node writes a file and fsyncs it, and reads the other's: both see every byte. */
    private static void exchange(IomapFileSystem a, IomapFileSystem b, int round) throws IOException {
        byte[] fromA = pattern(10 + round, 2 * BLOCK + round);
        byte[] fromB = pattern(20 + round, BLOCK + 3 * round);
        writeAndFsync(a, "/a-" + round, fromA);
        assertThat(read(b, "/a-" + round)).as("B reads A's file of round " + round).isEqualTo(fromA);
        writeAndFsync(b, "/b-" + round, fromB);
        assertThat(read(a, "/b-" + round)).as("A reads B's file of round " + round).isEqualTo(fromB);
        writeAndFsync(b, "/a-" + round, fromB);
        assertThat(read(a, "/a-" + round)).as("A reads B's overwrite of round " + round).isEqualTo(fromB);
    }

    private IomapFileSystem node(String id) throws IOException {
        ClusterSpec spec = ClusterSpec.parse("zk=" + ensemble.connectString()).withNodeId(id);
        IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", device, MountOptions.defaults().withCluster(spec));
        mounted.add(fs);
        return fs;
    }

    /**
     * Unmounts every node, newest first.
     *
     * @param mayBeFenced whether a node may have fenced itself, so that its unmount fails with the fence's
     *     {@link FileSystemShutdownException} (what a fenced node's unmount does is not judged here: the
     *     lease and fencing rules are being reworked; see the design notes, issue 40)
     */
    private void unmountAll(boolean mayBeFenced) {
        for (int i = mounted.size() - 1; i >= 0; i--) {
            try {
                mounted.remove(i).close();
            } catch (FileSystemShutdownException e) {
                if (!mayBeFenced) {
                    throw new AssertionError("an unmount failed", e);
                }
            } catch (IOException e) {
                throw new AssertionError("an unmount failed", e);
            }
        }
    }

    private static void writeAndFsync(IomapFileSystem fs, String path, byte[] bytes) throws IOException {
        try (IomapFile file = openOrCreate(fs, path)) {
            file.truncate(0);
            ByteBuffer src = ByteBuffer.wrap(bytes);
            while (src.hasRemaining()) {
                file.write(src.position(), src);
            }
            file.fsync();
        }
    }

    private static IomapFile openOrCreate(IomapFileSystem fs, String path) throws IOException {
        try {
            return fs.open(path);
        } catch (NoSuchFileException e) {
            return fs.create(path);
        }
    }

    private static byte[] read(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            ByteBuffer buffer = ByteBuffer.allocate((int) fs.stat(path).size());
            while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
                // reads until full or EOF
            }
            return Arrays.copyOf(buffer.array(), buffer.position());
        }
    }

    private static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + seed * 7 + 3);
        }
        return bytes;
    }
}
