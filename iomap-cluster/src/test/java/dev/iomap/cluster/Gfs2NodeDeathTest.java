package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.adapter.support.lock.InProcessCluster;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.lock.ClusterJoin;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One of three gfs2-like nodes dies at a random point of a random-operations run, like a power cut of its
 * machine, at the end of a run of its own operations of random length: its device writes stop, its cluster membership ends abruptly (in-process: {@link
 * InProcessCluster#kill}; ZooKeeper: its session closed on the server, its client closed) and its page
 * cache is never written back. The survivors recover its journal, find every file as {@link DeathModel}'s
 * rule allows (every byte the dead node fsync'd is there), go on with random operations, and after they
 * unmounted fsck finds the image clean. Every wait of a survivor is bounded (glock timeouts; the test's
 * timeout). Seeds: {@code gfs2.death.seeds} runs (default 4 in-process, 3 on ZooKeeper) from
 * {@code gfs2.death.seed} (default 1), {@code gfs2.death.ops} operations each (default 400).
 */
class Gfs2NodeDeathTest {
    private static final int BLOCK = 4096;
    private static final int NODES = 3;
    private static final String[] NAMES = {"a", "b", "c", "d"};
    private static final int MAX_SIZE = 5 * BLOCK;
    private static final int MAX_RUN = 16;
    private static final MountOptions OPTIONS = new MountOptions(PageCacheOptions.defaults(), false);

    /** How nodes join and how one dies. */
    private interface Harness extends AutoCloseable {
        /** @return node {@code n} mounted on its own view of the shared device */
        IomapFileSystem mount(int n, NodeDevice device) throws Exception;

        /** Node {@code n}'s cluster membership ends abruptly (its device was cut already). */
        void kill(int n) throws Exception;

        @Override
        void close() throws IOException;
    }

    @Test
    @Timeout(300)
    void aNodeDyingInProcessIsRecoveredAndLosesNothingItFsynced() throws Exception {
        for (long seed : seeds(4)) {
            InProcessCluster cluster = new InProcessCluster();
            run(seed, new Harness() {
                @Override
                public IomapFileSystem mount(int n, NodeDevice device) throws IOException {
                    return CoreRuntime.mount(new Gfs2LikeAdapter(cluster), device, OPTIONS);
                }

                @Override
                public void kill(int n) throws IOException {
                    cluster.kill(n);   // nodes join in order: node n has slot n
                }

                @Override
                public void close() {
                }
            });
        }
    }

    @Test
    @Timeout(300)
    void aNodeDyingOnZooKeeperIsRecoveredAndLosesNothingItFsynced() throws Exception {
        for (long seed : seeds(3)) {
            ZkTestServer zk = new ZkTestServer(true);
            List<CuratorFramework> clients = new ArrayList<>();
            run(seed, new Harness() {
                @Override
                public IomapFileSystem mount(int n, NodeDevice device) throws Exception {
                    CuratorFramework client = zk.client();
                    clients.add(client);
                    ClusterJoin join = new ZkClusterJoin(client, "node-" + n, Duration.ofMillis(200));
                    return CoreRuntime.mount(new Gfs2LikeAdapter(join), device, OPTIONS);
                }

                @Override
                public void kill(int n) throws Exception {
                    zk.killSession(clients.get(n));
                    clients.get(n).close();
                }

                @Override
                public void close() throws IOException {
                    zk.close();
                }
            });
        }
    }

    private static List<Long> seeds(int runs) {
        int count = Integer.getInteger("gfs2.death.seeds", runs);
        long first = Long.getLong("gfs2.death.seed", 1);
        List<Long> seeds = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            seeds.add(first + i);
        }
        return seeds;
    }

    private static void run(long seed, Harness harness) throws Exception {
        int ops = Integer.getInteger("gfs2.death.ops", 400);
        Random random = new Random(seed);
        int victim = random.nextInt(NODES);
        int deathAt = ops / 4 + random.nextInt(ops / 2);
        int lastRun = 1 + random.nextInt(MAX_RUN);   // the victim's own operations just before it dies
        DeathModel model = new DeathModel(victim);
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "death",
                Map.of("journals", "3", "rgblocks", "1024")));
        List<NodeDevice> devices = new ArrayList<>();
        List<IomapFileSystem> fs = new ArrayList<>();
        boolean dead = false;
        try (harness) {
            try {
                for (int n = 0; n < NODES; n++) {
                    devices.add(new NodeDevice(device));
                    fs.add(harness.mount(n, devices.get(n)));
                }
                int node = 0;
                int run = 0;
                for (int i = 0; i < ops; i++) {
                    String where = "seed " + seed + " op " + i;
                    if (i == deathAt) {
                        devices.get(victim).cut();
                        harness.kill(victim);
                        dead = true;
                        model.checkAfterDeath(fs.get((victim + 1) % NODES), where + " (node " + victim + " died)");
                        run = 0;
                    }
                    if (i == deathAt - lastRun) {
                        node = victim;
                        run = lastRun;
                    }
                    if (run == 0) {
                        do {
                            node = random.nextInt(NODES);
                        } while (dead && node == victim);
                        run = 1 + random.nextInt(MAX_RUN);
                    }
                    run--;
                    step(fs.get(node), node, model, random, i, where);
                }
                for (int n = 0; n < NODES; n++) {
                    if (n == victim) {
                        continue;
                    }
                    for (Map.Entry<String, byte[]> e : model.current.entrySet()) {
                        Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(fs.get(n), "/" + e.getKey()),
                                e.getValue(), "seed " + seed + " final read on node " + n + " of /" + e.getKey());
                    }
                }
                assertThat(devices.get(victim).writes()).as("seed %d: the dead node wrote before it died", seed)
                        .isPositive();
            } finally {
                for (int n = fs.size() - 1; n >= 0; n--) {
                    if (n != victim) {
                        fs.get(n).close();
                    }
                }
                if (fs.size() > victim) {
                    try {
                        fs.get(victim).close();   // releases its threads; it can write nothing (cut, fenced)
                    } catch (IOException expected) {
                        // the dead node's unmount fails: fenced
                    }
                }
            }
        }
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("seed " + seed + " fsck").isEmpty();
    }

    private static void step(IomapFileSystem node, int n, DeathModel model, Random random, int i, String op)
            throws IOException {
        String name = NAMES[random.nextInt(NAMES.length)];
        String path = "/" + name;
        String where = op + " on node " + n + " " + path;
        byte[] bytes = model.current.get(name);
        int kind = random.nextInt(10);
        if (bytes == null) {
            if (kind < 8) {
                model.touched(n, name);
                boolean sync = random.nextInt(4) == 0;
                try (IomapFile file = node.create(path)) {
                    if (sync) {
                        file.fsync();
                    }
                }
                model.changed(n, name, new byte[0], sync);
            }
            return;
        }
        model.touched(n, name);
        switch (kind) {
            case 0, 1, 2 -> {
                int pos = random.nextInt(MAX_SIZE - BLOCK);
                byte[] data = Gfs2ZkFenceTest.pattern(i, Math.min(1 + random.nextInt(2 * BLOCK), MAX_SIZE - pos));
                boolean sync = random.nextBoolean();
                try (IomapFile file = node.open(path)) {
                    Gfs2ZkFenceTest.write(file, pos, data);
                    if (sync) {
                        file.fsync();
                    }
                }
                byte[] next = Arrays.copyOf(bytes, Math.max(bytes.length, pos + data.length));
                System.arraycopy(data, 0, next, pos, data.length);
                model.changed(n, name, next, sync);
            }
            case 3 -> {
                int size = random.nextInt(MAX_SIZE);
                boolean sync = random.nextBoolean();
                try (IomapFile file = node.open(path)) {
                    file.truncate(size);
                    if (sync) {
                        file.fsync();
                    }
                }
                model.changed(n, name, Arrays.copyOf(bytes, size), sync);
            }
            case 4, 5, 6 -> Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(node, path), bytes, where + " read");
            case 7 -> assertThat(node.stat(path).size()).as(where + " size").isEqualTo(bytes.length);
            case 8 -> {
                node.unlink(path);
                model.changed(n, name, null, false);
            }
            default -> assertThat(node.readdir("/").stream().map(DirEntry::name)
                    .filter(e -> !e.equals(".") && !e.equals("..")).toList())
                    .as(where + " listing").containsExactlyElementsOf(model.current.keySet());
        }
    }
}
