package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * gfs2-like nodes (mounts of one RAM device, each with its own page cache, Curator client and ZooKeeper
 * session) kept coherent by {@link ZkLockManager} glocks on a real ZooKeeper ({@link ZkTestServer}):
 * what one node wrote and gave up is what the next node reads. Every node is unmounted and every
 * client and the server closed after each test, also when it fails.
 */
class Gfs2ZkCoherenceTest {
    private static final int BLOCK = 4096;
    private static final int SIZE = 3 * BLOCK + 123;

    private ZkTestServer zk;
    private RamBlockDevice device;
    private final List<IomapFileSystem> mounted = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        zk = new ZkTestServer();
        device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "zk", Map.of("journals", "3")));
    }

    @AfterEach
    void stop() throws IOException {
        try {
            for (int i = mounted.size() - 1; i >= 0; i--) {
                mounted.get(i).close();
            }
        } finally {
            zk.close();
        }
    }

    /** @return a new node: its own client and session, joined as {@code node-<n>} */
    private IomapFileSystem node() throws Exception {
        ZkClusterJoin join = new ZkClusterJoin(zk.client(), "node-" + mounted.size(), Duration.ofMillis(200));
        IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(join), device,
                new MountOptions(PageCacheOptions.defaults(), false));
        mounted.add(fs);
        return fs;
    }

    private static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + seed * 7 + 3);
        }
        return bytes;
    }

    private static void write(IomapFile file, long pos, byte[] bytes) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(bytes);
        while (src.hasRemaining()) {
            file.write(pos + src.position(), src);
        }
    }

    private static byte[] readAll(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            return readAll(fs, path, file);
        }
    }

    private static byte[] readAll(IomapFileSystem fs, String path, IomapFile file) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate((int) fs.stat(path).size());
        while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
            // reads until full or EOF
        }
        return Arrays.copyOf(buffer.array(), buffer.position());
    }

    private static void assertBytes(byte[] actual, byte[] expected, String what) {
        assertThat(actual.length).as(what + ": length").isEqualTo(expected.length);
        assertThat(Arrays.mismatch(actual, expected)).as(what + ": first differing byte").isEqualTo(-1);
    }

    /** Unmounts every node, then fsck finds the image clean. */
    private void assertCleanAfterUnmount() throws IOException {
        for (int i = mounted.size() - 1; i >= 0; i--) {
            mounted.remove(i).close();
        }
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("fsck after every node unmounted").isEmpty();
    }

    @Test
    void aNodeReadsWhatAnotherNodeOverwroteAfterItHadCachedTheFile() throws Exception {
        IomapFileSystem a = node();
        IomapFileSystem b = node();
        try (IomapFile file = a.create("/f")) {
            write(file, 0, pattern(1, SIZE));
            file.fsync();
            assertBytes(readAll(a, "/f", file), pattern(1, SIZE), "A reads its own bytes (now cached)");
            try (IomapFile other = b.open("/f")) {
                assertBytes(readAll(b, "/f", other), pattern(1, SIZE), "B reads A's bytes");
                write(other, 0, pattern(2, SIZE));
                other.fsync();
            }
            assertBytes(readAll(a, "/f", file), pattern(2, SIZE), "A's next read, after B overwrote");
        }
        assertThat(a.stats().adapterCounters().get("glock.demotions")).as("A's demotions").isGreaterThan(0L);
        assertCleanAfterUnmount();
    }

    @Test
    void aNodeReadsWhatAnotherNodeLeftDirtyInItsCache() throws Exception {
        IomapFileSystem a = node();
        IomapFileSystem b = node();
        byte[] dirty = pattern(4, SIZE + 2 * BLOCK);
        try (IomapFile file = a.create("/f")) {
            write(file, 0, pattern(3, SIZE));
            file.fsync();
            write(file, 0, dirty);
            assertBytes(readAll(b, "/f"), dirty, "B reads A's unsynced, longer bytes");
            assertBytes(readAll(a, "/f", file), dirty, "A still reads them");
        }
        assertCleanAfterUnmount();
    }

    @Test
    void threeNodesAppendingToTheirOwnFilesEachReadAllThree() throws Exception {
        int rounds = 3;
        int chunk = BLOCK + 1000;
        List<IomapFileSystem> fs = List.of(node(), node(), node());
        List<IomapFile> files = new ArrayList<>();
        try {
            for (int n = 0; n < 3; n++) {
                files.add(fs.get(n).create("/node" + n));
            }
            for (int r = 0; r < rounds; r++) {
                for (int n = 0; n < 3; n++) {
                    write(files.get(n), (long) r * chunk, pattern(10 * n + r, chunk));
                }
                for (int reader = 0; reader < 3; reader++) {
                    for (int n = 0; n < 3; n++) {
                        byte[] expected = new byte[(r + 1) * chunk];
                        for (int k = 0; k <= r; k++) {
                            System.arraycopy(pattern(10 * n + k, chunk), 0, expected, k * chunk, chunk);
                        }
                        assertBytes(readAll(fs.get(reader), "/node" + n), expected,
                                "node " + reader + " reads node " + n + "'s file after round " + r);
                    }
                }
            }
        } finally {
            for (IomapFile file : files) {
                file.close();
            }
        }
        assertCleanAfterUnmount();
    }

    @Test
    void namesCreatedOnOneNodeAreSeenOnTheOtherAndUnlinksToo() throws Exception {
        IomapFileSystem a = node();
        IomapFileSystem b = node();
        a.mkdir("/d");
        try (IomapFile file = a.create("/d/x")) {
            write(file, 0, pattern(5, 100));
        }
        assertThat(names(b.readdir("/"))).containsExactly("d");
        assertThat(names(b.readdir("/d"))).containsExactly("x");
        assertBytes(readAll(b, "/d/x"), pattern(5, 100), "B reads A's new file");
        b.unlink("/d/x");
        assertThat(a.readdir("/d")).as("A's listing after B's unlink").isEmpty();
        assertThatThrownBy(() -> a.open("/d/x")).isInstanceOf(NoSuchFileException.class);
        assertCleanAfterUnmount();
    }

    @Test
    void threeNodesAppendAndReadEachOthersFilesAtOnceWithoutTornChunks() throws Exception {
        int appends = 12;
        int chunk = BLOCK + 333;
        List<IomapFileSystem> fs = List.of(node(), node(), node());
        for (int n = 0; n < 3; n++) {
            fs.get(n).create("/node" + n).close();
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(3);
        try {
            List<java.util.concurrent.Future<Void>> done = new ArrayList<>();
            for (int n = 0; n < 3; n++) {
                int node = n;
                done.add(pool.submit(() -> {
                    String neighbour = "/node" + ((node + 1) % 3);
                    try (IomapFile file = fs.get(node).open("/node" + node)) {
                        for (int i = 0; i < appends; i++) {
                            write(file, (long) i * chunk, pattern(100 * node + i, chunk));
                            byte[] seen = readAll(fs.get(node), neighbour);
                            assertThat(seen.length % chunk).as("node %d reads whole chunks of %s", node, neighbour)
                                    .isZero();
                            for (int k = 0; k < seen.length / chunk; k++) {
                                assertThat(Arrays.mismatch(Arrays.copyOfRange(seen, k * chunk, (k + 1) * chunk),
                                        pattern(100 * ((node + 1) % 3) + k, chunk))).as("chunk %d", k).isEqualTo(-1);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<Void> f : done) {
                f.get(60, java.util.concurrent.TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS)).as("threads ended").isTrue();
        }
        for (int n = 0; n < 3; n++) {
            assertThat(readAll(fs.get((n + 2) % 3), "/node" + n).length).isEqualTo(appends * chunk);
        }
        assertCleanAfterUnmount();
    }

    private static List<String> names(List<DirEntry> entries) {
        return entries.stream().map(DirEntry::name).filter(n -> !n.equals(".") && !n.equals("..")).toList();
    }
}
