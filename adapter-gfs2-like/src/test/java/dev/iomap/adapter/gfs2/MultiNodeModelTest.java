package dev.iomap.adapter.gfs2;

import static dev.iomap.adapter.gfs2.MultiNodeCoherenceTest.assertBytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.support.lock.InProcessCluster;
import dev.iomap.api.DirEntry;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Random operations dispatched to three gfs2-like nodes of one in-process cluster, on the same few files,
 * checked against one model of the filesystem: every read, size and listing on any node must be what
 * the operations before it (on whichever node) left. Ops and seed from the system properties
 * {@code gfs2.multinode.ops} (default 2000; 20,000 take about 5 s) and {@code gfs2.multinode.seed}
 * (default 16); a failure names the seed and the operation.
 */
class MultiNodeModelTest {
    private static final int NODES = 3;
    private static final String[] NAMES = {"a", "b", "c", "d"};
    private static final int MAX_SIZE = 6 * Nodes.BLOCK;

    @Test
    void randomOperationsOnThreeNodesMatchOneModel() throws IOException {
        int ops = Integer.getInteger("gfs2.multinode.ops", 2000);
        long seed = Long.getLong("gfs2.multinode.seed", 16);
        Random random = new Random(seed);
        Map<String, byte[]> model = new TreeMap<>();
        try (Nodes nodes = new Nodes(new InProcessCluster(), NODES, 16)) {
            List<IomapFileSystem> fs = new ArrayList<>();
            for (int n = 0; n < NODES; n++) {
                fs.add(nodes.mount());
            }
            for (int i = 0; i < ops; i++) {
                int n = random.nextInt(NODES);
                String name = NAMES[random.nextInt(NAMES.length)];
                String path = "/" + name;
                String where = "seed " + seed + " op " + i + " on node " + n + " " + path;
                byte[] bytes = model.get(name);
                int kind = random.nextInt(10);
                if (bytes == null) {
                    if (kind < 8) {
                        fs.get(n).create(path).close();
                        model.put(name, new byte[0]);
                    }
                    continue;
                }
                switch (kind) {
                    case 0, 1, 2 -> {
                        int pos = random.nextInt(MAX_SIZE - Nodes.BLOCK);
                        byte[] data = Nodes.pattern(i, 1 + random.nextInt(2 * Nodes.BLOCK));
                        data = Arrays.copyOf(data, Math.min(data.length, MAX_SIZE - pos));
                        try (IomapFile file = fs.get(n).open(path)) {
                            Nodes.write(file, pos, data);
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
                    case 4, 5, 6 -> assertBytes(Nodes.readAll(fs.get(n), path), bytes, where + " read");
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
            for (int n = 0; n < NODES; n++) {
                for (Map.Entry<String, byte[]> e : model.entrySet()) {
                    assertBytes(Nodes.readAll(fs.get(n), "/" + e.getKey()), e.getValue(),
                            "seed " + seed + " final read on node " + n + " of /" + e.getKey());
                }
            }
            MultiNodeCoherenceTest.assertCleanAfterUnmount(nodes);
        }
    }
}
