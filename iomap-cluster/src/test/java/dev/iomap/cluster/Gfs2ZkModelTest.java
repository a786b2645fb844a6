package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Random operations dispatched to three gfs2-like nodes whose glocks are on a real ZooKeeper, on the same
 * few files, against one model: every read, size and listing on any node is what the operations before
 * it (on whichever node) left; fsck is clean after every node unmounted. Operations go to one node in
 * runs of random length (1 to {@link #MAX_RUN}), so glocks change hands often (about one grant every three
 * operations) but not at every operation. Ops and seed from the system properties {@code gfs2.zk.ops}
 * (default 10,000: about 30 s on a loaded 2-core machine) and {@code gfs2.zk.seed} (default 16); the run
 * prints its time and ZooKeeper requests per operation.
 */
class Gfs2ZkModelTest {
    private static final int BLOCK = 4096;
    private static final int NODES = 3;
    private static final String[] NAMES = {"a", "b", "c"};
    private static final int MAX_SIZE = 5 * BLOCK;
    /** The longest run of operations dispatched to one node before another is picked. */
    private static final int MAX_RUN = 48;

    @Test
    void randomOperationsOnThreeZooKeeperNodesMatchOneModel() throws Exception {
        int ops = Integer.getInteger("gfs2.zk.ops", 10_000);
        long seed = Long.getLong("gfs2.zk.seed", 16);
        Random random = new Random(seed);
        Map<String, byte[]> model = new TreeMap<>();
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        // four resource groups: a node that takes over a namespace change hands over every group glock
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "zkmodel",
                Map.of("journals", "3", "rgblocks", "1024")));
        List<IomapFileSystem> fs = new ArrayList<>();
        try (ZkTestServer zk = new ZkTestServer(true)) {
            try {
                for (int n = 0; n < NODES; n++) {
                    ZkClusterJoin join = new ZkClusterJoin(zk.client(), "model-" + n, Duration.ofMillis(200));
                    fs.add(CoreRuntime.mount(new Gfs2LikeAdapter(join), device,
                            new MountOptions(PageCacheOptions.defaults(), false)));
                }
                long start = System.nanoTime();
                int node = 0;
                int run = 0;
                for (int i = 0; i < ops; i++) {
                    if (run == 0) {
                        node = random.nextInt(NODES);
                        run = 1 + random.nextInt(MAX_RUN);
                    }
                    run--;
                    step(fs.get(node), node, model, random, i, "seed " + seed + " op " + i);
                }
                long elapsed = System.nanoTime() - start;
                long requests = 0;
                long grants = 0;
                long cached = 0;
                long demotions = 0;
                for (IomapFileSystem each : fs) {
                    Map<String, Long> counters = each.stats().adapterCounters();
                    requests += counters.get("glock.zk.requests");
                    grants += counters.get("glock.grants");
                    cached += counters.get("glock.cachedHolds");
                    demotions += counters.get("glock.demotions");
                }
                System.out.printf("Gfs2ZkModelTest seed %d: %d ops in %.1f s (%.2f ms/op); ZooKeeper requests "
                        + "%.2f/op, glock grants %d, cached holds %d, demotions %d%n", seed, ops, elapsed / 1e9,
                        elapsed / 1e6 / ops, (double) requests / ops, grants, cached, demotions);
                for (int n = 0; n < NODES; n++) {
                    for (Map.Entry<String, byte[]> e : model.entrySet()) {
                        assertBytes(readAll(fs.get(n), "/" + e.getKey()), e.getValue(),
                                "seed " + seed + " final read on node " + n + " of /" + e.getKey());
                    }
                }
            } finally {
                for (int n = fs.size() - 1; n >= 0; n--) {
                    fs.get(n).close();
                }
            }
        }
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("seed " + seed + " fsck").isEmpty();
    }

    private static void step(IomapFileSystem node, int n, Map<String, byte[]> model, Random random, int i,
            String op) throws IOException {
        String name = NAMES[random.nextInt(NAMES.length)];
        String path = "/" + name;
        String where = op + " on node " + n + " " + path;
        byte[] bytes = model.get(name);
        int kind = random.nextInt(10);
        if (bytes == null) {
            if (kind < 8) {
                node.create(path).close();
                model.put(name, new byte[0]);
            }
            return;
        }
        switch (kind) {
            case 0, 1, 2 -> {
                int pos = random.nextInt(MAX_SIZE - BLOCK);
                byte[] data = pattern(i, Math.min(1 + random.nextInt(2 * BLOCK), MAX_SIZE - pos));
                try (IomapFile file = node.open(path)) {
                    ByteBuffer src = ByteBuffer.wrap(data);
                    while (src.hasRemaining()) {
                        file.write(pos + src.position(), src);
                    }
                    if (random.nextBoolean()) {
                        file.fsync();
                    }
                }
                byte[] next = Arrays.copyOf(bytes, Math.max(bytes.length, pos + data.length));
                System.arraycopy(data, 0, next, pos, data.length);
                model.put(name, next);
            }
            case 3 -> {
                int size = random.nextInt(MAX_SIZE);
                try (IomapFile file = node.open(path)) {
                    file.truncate(size);
                }
                model.put(name, Arrays.copyOf(bytes, size));
            }
            case 4, 5, 6 -> assertBytes(readAll(node, path), bytes, where + " read");
            case 7 -> assertThat(node.stat(path).size()).as(where + " size").isEqualTo(bytes.length);
            case 8 -> {
                node.unlink(path);
                model.remove(name);
            }
            default -> assertThat(node.readdir("/").stream().map(DirEntry::name)
                    .filter(e -> !e.equals(".") && !e.equals("..")).toList())
                    .as(where + " listing").containsExactlyElementsOf(model.keySet());
        }
    }

    private static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + seed * 7 + 3);
        }
        return bytes;
    }

    private static byte[] readAll(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            ByteBuffer buffer = ByteBuffer.allocate((int) fs.stat(path).size());
            while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
                // reads until full or EOF
            }
            return Arrays.copyOf(buffer.array(), buffer.position());
        }
    }

    private static void assertBytes(byte[] actual, byte[] expected, String what) {
        assertThat(actual.length).as(what + ": length").isEqualTo(expected.length);
        assertThat(Arrays.mismatch(actual, expected)).as(what + ": first differing byte").isEqualTo(-1);
    }
}
