package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link OpenFlag#APPEND} writes of two gfs2-like nodes of one RAM device (each with its own page cache,
 * Curator client and ZooKeeper session on a real server, {@link ZkTestServer}) to one file, issue 35
 * item 7: each lands at the end the filesystem knows under the inode glock, after the ones before it,
 * none overwriting another, whatever position the caller passed. Every node is unmounted and every
 * client and the server closed after each test, also when it fails.
 */
@Timeout(180)
class Gfs2ZkAppendTest {
    private static final int BLOCK = 4096;

    private ZkTestServer zk;
    private RamBlockDevice device;
    private final List<IomapFileSystem> mounted = new ArrayList<>();
    private final List<CuratorFramework> clients = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        zk = new ZkTestServer();
        device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "open", Map.of("journals", "3")));
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
        CuratorFramework client = zk.client();
        clients.add(client);
        ZkClusterJoin join = new ZkClusterJoin(client, "node-" + clients.size(), Duration.ofMillis(200));
        IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(join), device,
                new MountOptions(PageCacheOptions.defaults(), false));
        mounted.add(fs);
        return fs;
    }

    private static byte[] line(String text) {
        return (text + "\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** Appends all of {@code bytes}, at a position the append must ignore. */
    private static void append(IomapFile file, byte[] bytes) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(bytes);
        while (src.hasRemaining()) {
            file.write(0, src);
        }
    }

    /** Unmounts every node still mounted, then fsck finds the image clean. */
    private void assertCleanAfterUnmount() throws IOException {
        for (int i = mounted.size() - 1; i >= 0; i--) {
            mounted.remove(i).close();
        }
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("fsck after every node unmounted").isEmpty();
    }

    @Test
    void appendsOfTwoNodesAlternateAndAllSurvive() throws Exception {
        IomapFileSystem a = node();
        IomapFileSystem b = node();
        a.create("/r").close();
        StringBuilder expected = new StringBuilder();
        try (IomapFile fa = a.open("/r", Set.of(OpenFlag.APPEND));
                IomapFile fb = b.open("/r", Set.of(OpenFlag.APPEND))) {
            for (int i = 1; i <= 20; i++) {
                append(fa, line("A" + i));
                append(fb, line("B" + i));
                expected.append("A").append(i).append('\n').append("B").append(i).append('\n');
            }
            assertThat(fa.stat().size()).as("A's size").isEqualTo(expected.length());
        }
        for (IomapFileSystem node : List.of(a, b)) {
            assertThat(new String(Gfs2ZkFenceTest.readAll(node, "/r"), StandardCharsets.US_ASCII))
                    .isEqualTo(expected.toString());
        }
        assertCleanAfterUnmount();
    }

    @Test
    void concurrentAppendsOfTwoNodesEachLandWholeInTheirOwnOrder() throws Exception {
        int records = 60;
        List<IomapFileSystem> nodes = List.of(node(), node());
        nodes.get(0).create("/log").close();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Void>> done = new ArrayList<>();
            for (int n = 0; n < 2; n++) {
                IomapFileSystem fs = nodes.get(n);
                String who = n == 0 ? "a" : "b";
                done.add(pool.submit(() -> {
                    try (IomapFile file = fs.open("/log", Set.of(OpenFlag.APPEND, OpenFlag.DSYNC))) {
                        for (int i = 0; i < records; i++) {
                            append(file, line(who + String.format("%04d", i) + "-".repeat(40 + i)));
                        }
                    }
                    return null;
                }));
            }
            for (Future<Void> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).as("threads ended").isTrue();
        }
        String[] lines = new String(Gfs2ZkFenceTest.readAll(nodes.get(1), "/log"), StandardCharsets.US_ASCII)
                .split("\n", -1);
        assertThat(lines).hasSize(2 * records + 1);
        assertThat(lines[2 * records]).as("nothing after the last newline").isEmpty();
        for (String who : List.of("a", "b")) {
            List<String> mine = Arrays.stream(lines).filter(l -> l.startsWith(who)).toList();
            List<String> wanted = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                wanted.add(who + String.format("%04d", i) + "-".repeat(40 + i));
            }
            assertThat(mine).as("node %s's records, whole and in order", who).isEqualTo(wanted);
        }
        assertCleanAfterUnmount();
    }
}
