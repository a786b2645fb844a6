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
 * it (on whichever node) left; fsck is clean after every node unmounted. Ops and seed from the system
 * properties {@code gfs2.zk.ops} (default 300) and {@code gfs2.zk.seed} (default 16).
 */
class Gfs2ZkModelTest {
    private static final int BLOCK = 4096;
    private static final int NODES = 3;
    private static final String[] NAMES = {"a", "b", "c"};
    private static final int MAX_SIZE = 5 * BLOCK;

    @Test
    void randomOperationsOnThreeZooKeeperNodesMatchOneModel() throws Exception {
        int ops = Integer.getInteger("gfs2.zk.ops", 300);
        long seed = Long.getLong("gfs2.zk.seed", 16);
        Random random = new Random(seed);
        Map<String, byte[]> model = new TreeMap<>();
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "zkmodel", Map.of("journals", "3")));
        List<IomapFileSystem> fs = new ArrayList<>();
        try (ZkTestServer zk = new ZkTestServer()) {
            try {
                for (int n = 0; n < NODES; n++) {
                    ZkClusterJoin join = new ZkClusterJoin(zk.client(), "model-" + n, Duration.ofMillis(200));
                    fs.add(CoreRuntime.mount(new Gfs2LikeAdapter(join), device,
                            new MountOptions(PageCacheOptions.defaults(), false)));
                }
                for (int i = 0; i < ops; i++) {
                    step(fs, model, random, i, "seed " + seed + " op " + i);
                }
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

    private static void step(List<IomapFileSystem> fs, Map<String, byte[]> model, Random random, int i, String op)
            throws IOException {
        int n = random.nextInt(NODES);
        String name = NAMES[random.nextInt(NAMES.length)];
        String path = "/" + name;
        String where = op + " on node " + n + " " + path;
        byte[] bytes = model.get(name);
        int kind = random.nextInt(10);
        if (bytes == null) {
            if (kind < 8) {
                fs.get(n).create(path).close();
                model.put(name, new byte[0]);
            }
            return;
        }
        switch (kind) {
            case 0, 1, 2 -> {
                int pos = random.nextInt(MAX_SIZE - BLOCK);
                byte[] data = pattern(i, Math.min(1 + random.nextInt(2 * BLOCK), MAX_SIZE - pos));
                try (IomapFile file = fs.get(n).open(path)) {
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
                try (IomapFile file = fs.get(n).open(path)) {
                    file.truncate(size);
                }
                model.put(name, Arrays.copyOf(bytes, size));
            }
            case 4, 5, 6 -> assertBytes(readAll(fs.get(n), path), bytes, where + " read");
            case 7 -> assertThat(fs.get(n).stat(path).size()).as(where + " size").isEqualTo(bytes.length);
            case 8 -> {
                fs.get(n).unlink(path);
                model.remove(name);
            }
            default -> assertThat(fs.get(n).readdir("/").stream().map(DirEntry::name)
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
