package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.support.lock.InProcessCluster;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Three nodes at once, each on its own thread: each appends chunks to its own file and after every
 * append reads its neighbour's file, which must be a whole number of the neighbour's chunks, each the
 * bytes the neighbour wrote there (never a torn or stale chunk), and creates and removes a name in the
 * shared root directory. Nobody may block: the test fails if the threads have not finished in 60 s.
 */
class MultiNodeConcurrencyTest {
    private static final int NODES = 3;
    private static final int APPENDS = 40;
    private static final int CHUNK = Nodes.BLOCK + 333;

    @Test
    void threeNodesAppendReadAndRenameAtOnce() throws Exception {
        try (Nodes nodes = new Nodes(new InProcessCluster(), NODES, 32)) {
            List<IomapFileSystem> fs = new ArrayList<>();
            for (int n = 0; n < NODES; n++) {
                fs.add(nodes.mount());
                fs.get(n).create("/node" + n).close();
            }
            ExecutorService pool = Executors.newFixedThreadPool(NODES);
            try {
                List<Future<Void>> done = new ArrayList<>();
                for (int n = 0; n < NODES; n++) {
                    int node = n;
                    done.add(pool.submit(() -> {
                        work(fs.get(node), node);
                        return null;
                    }));
                }
                for (Future<Void> f : done) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
                assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).as("node threads ended").isTrue();
            }
            for (int reader = 0; reader < NODES; reader++) {
                for (int n = 0; n < NODES; n++) {
                    byte[] bytes = Nodes.readAll(fs.get(reader), "/node" + n);
                    assertThat(bytes.length).as("node %d's file on node %d", n, reader).isEqualTo(APPENDS * CHUNK);
                    checkChunks(bytes, n, "final read of node " + n + "'s file on node " + reader);
                }
                assertThat(fs.get(reader).readdir("/").stream().map(e -> e.name())
                        .filter(x -> x.startsWith("node")).sorted().toList())
                        .containsExactly("node0", "node1", "node2");
            }
            MultiNodeCoherenceTest.assertCleanAfterUnmount(nodes);
        }
    }

    private static void work(IomapFileSystem fs, int node) throws IOException {
        String neighbour = "/node" + ((node + 1) % NODES);
        try (IomapFile file = fs.open("/node" + node)) {
            for (int i = 0; i < APPENDS; i++) {
                Nodes.write(file, (long) i * CHUNK, chunk(node, i));
                if (i % 4 == 0) {
                    file.fsync();
                }
                byte[] seen = Nodes.readAll(fs, neighbour);
                checkChunks(seen, (node + 1) % NODES, "node " + node + " reading " + neighbour + " at append " + i);
                String temp = "/tmp-" + node + "-" + i;
                fs.create(temp).close();
                fs.unlink(temp);
            }
        }
    }

    private static byte[] chunk(int node, int i) {
        return Nodes.pattern(100 * node + i, CHUNK);
    }

    private static void checkChunks(byte[] bytes, int node, String what) {
        assertThat(bytes.length % CHUNK).as(what + ": whole chunks").isZero();
        for (int i = 0; i < bytes.length / CHUNK; i++) {
            assertThat(Arrays.mismatch(Arrays.copyOfRange(bytes, i * CHUNK, (i + 1) * CHUNK), chunk(node, i)))
                    .as(what + ": chunk " + i).isEqualTo(-1);
        }
    }
}
