package dev.iomap.cluster;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.lock.ClusterJoin;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The cluster benchmark of issue 16: what glocks on ZooKeeper cost gfs2-like nodes of one JVM sharing one
 * device. Three scenarios, each on nodes that join through their own Curator client (own session) and
 * mount the device through the caller's {@link NodeMounter}:
 * <ol>
 *   <li>{@code own-files}: three nodes, each writing and reading its own file (4 KiB at a time) after a
 *       warm-up: ZooKeeper requests per operation (the target is 0);</li>
 *   <li>{@code ping-pong}: two nodes writing 4 KiB into one file in turns: each write is a handoff of the
 *       file's glock; requests and milliseconds per handoff;</li>
 *   <li>{@code independent}: 1, 2, then 3 nodes on their own threads, each writing its own file (4 KiB
 *       writes, an fsync every 64): operations per second and MiB/s as nodes are added.</li>
 * </ol>
 * Requests are the change of the mounts' {@code glock.zk.requests} counters (every request a node's glock
 * manager sent, one round trip each), summed over the nodes, after their demoter threads settled.
 *
 * <p>The caller formats the device gfs2-like with at least three journals first, and owns it. The
 * iomap-cluster module does not depend on the core or the adapter: the CLI passes
 * {@code (join, device) -> CoreRuntime.mount(new Gfs2LikeAdapter(join), device, options)}. Not thread-safe:
 * one {@link #run} at a time.
 */
public final class ClusterBench {
    private static final int IO = 4096;

    /** How the benchmark mounts one node. */
    @FunctionalInterface
    public interface NodeMounter {
        /**
         * Mounts the shared device as a gfs2-like cluster node that joins through {@code join}.
         *
         * @param join this node's way into the cluster
         * @param device the shared device
         * @return the mounted filesystem (the benchmark closes it)
         * @throws IOException if the mount fails
         */
        IomapFileSystem mount(ClusterJoin join, BlockDevice device) throws IOException;
    }

    /**
     * One line of the result.
     *
     * @param scenario {@code own-files}, {@code ping-pong} or {@code independent}
     * @param nodes nodes taking part
     * @param ops operations measured (writes and reads; in ping-pong, writes = handoffs)
     * @param seconds wall time of the measured part
     * @param requestsPerOp ZooKeeper requests (round trips) per operation, all nodes together
     * @param grantsPerOp glock grants per operation (modes the nodes did not hold)
     * @param opsPerSecond operations per second, all nodes together
     * @param mibPerSecond bytes written and read per second, in MiB
     */
    public record Row(String scenario, int nodes, long ops, double seconds, double requestsPerOp,
            double grantsPerOp, double opsPerSecond, double mibPerSecond) {
    }

    private final String connectString;
    private final NodeMounter mounter;
    private final BlockDevice device;
    private final int ops;

    /**
     * @param connectString the ZooKeeper ensemble ({@code HOST:PORT[,…]})
     * @param mounter how a node mounts the device
     * @param device the shared device, formatted gfs2-like with at least three journals
     * @param ops operations per node and scenario (at least 1)
     */
    public ClusterBench(String connectString, NodeMounter mounter, BlockDevice device, int ops) {
        this.connectString = Objects.requireNonNull(connectString, "connectString");
        this.mounter = Objects.requireNonNull(mounter, "mounter");
        this.device = Objects.requireNonNull(device, "device");
        if (ops < 1) {
            throw new IllegalArgumentException("ops must be at least 1: " + ops);
        }
        this.ops = ops;
    }

    /**
     * Runs the three scenarios, one after the other; every node is unmounted and every client closed
     * after each, also on failure.
     *
     * @return own-files, ping-pong, independent with 1, 2 and 3 nodes
     * @throws IOException if a node fails
     * @throws InterruptedException if interrupted
     */
    public List<Row> run() throws IOException, InterruptedException {
        List<Row> rows = new ArrayList<>();
        rows.add(ownFiles());
        rows.add(pingPong());
        for (int nodes = 1; nodes <= 3; nodes++) {
            rows.add(independent(nodes));
        }
        return rows;
    }

    /**
     * @param rows a result
     * @return it as a text table, one line per row, with a header
     */
    public static String table(List<Row> rows) {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "%-12s %5s %8s %8s %12s %10s %10s %8s%n",
                "scenario", "nodes", "ops", "seconds", "requests/op", "grants/op", "ops/s", "MiB/s"));
        for (Row r : rows) {
            out.append(String.format(Locale.ROOT, "%-12s %5d %8d %8.2f %12.2f %10.3f %10.0f %8.1f%n", r.scenario(),
                    r.nodes(), r.ops(), r.seconds(), r.requestsPerOp(), r.grantsPerOp(), r.opsPerSecond(),
                    r.mibPerSecond()));
        }
        return out.toString();
    }

    private Row ownFiles() throws IOException, InterruptedException {
        try (Nodes nodes = new Nodes(3)) {
            List<IomapFile> files = new ArrayList<>();
            for (int n = 0; n < 3; n++) {   // creating takes every resource group: all first
                files.add(nodes.fs.get(n).create("/bench-own-" + n));
            }
            for (int n = 0; n < 3; n++) {   // warm-up: each node takes its home group back
                write(files.get(n), 0, n);
                read(files.get(n), 0);
            }
            Nodes.Snapshot before = nodes.settle();
            long start = System.nanoTime();
            for (int i = 0; i < ops; i++) {
                for (int n = 0; n < 3; n++) {
                    long at = (long) (i % 64) * IO;
                    if (i % 2 == 0) {
                        write(files.get(n), at, i);
                    } else {
                        read(files.get(n), at);
                    }
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            for (IomapFile file : files) {
                file.close();
            }
            return nodes.row("own-files", 3L * ops, seconds, before);
        }
    }

    private Row pingPong() throws IOException, InterruptedException {
        try (Nodes nodes = new Nodes(2)) {
            IomapFile[] files = new IomapFile[2];
            try (IomapFile created = nodes.fs.get(0).create("/bench-pingpong")) {
                write(created, 0, 0);
            }
            files[0] = nodes.fs.get(0).open("/bench-pingpong");
            files[1] = nodes.fs.get(1).open("/bench-pingpong");
            for (int i = 0; i < 4; i++) {   // warm-up: each node has its home resource group
                write(files[i % 2], 0, i);
            }
            Nodes.Snapshot before = nodes.settle();
            long start = System.nanoTime();
            for (int i = 0; i < ops; i++) {
                write(files[i % 2], 0, i);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            files[0].close();
            files[1].close();
            return nodes.row("ping-pong", ops, seconds, before);
        }
    }

    private Row independent(int count) throws IOException, InterruptedException {
        try (Nodes nodes = new Nodes(count)) {
            List<IomapFile> files = new ArrayList<>();
            for (int n = 0; n < count; n++) {
                files.add(nodes.fs.get(n).create("/bench-ind-" + count + "-" + n));
            }
            for (int n = 0; n < count; n++) {
                write(files.get(n), 0, n);
            }
            Nodes.Snapshot before = nodes.settle();
            ExecutorService threads = Executors.newFixedThreadPool(count);
            long start = System.nanoTime();
            try {
                List<Future<Void>> done = new ArrayList<>();
                for (IomapFile file : files) {
                    done.add(threads.submit(() -> {
                        for (int i = 0; i < ops; i++) {
                            write(file, (long) (i % 256) * IO, i);
                            if (i % 64 == 63) {
                                file.fsync();
                            }
                        }
                        file.fsync();
                        return null;
                    }));
                }
                for (Future<Void> f : done) {
                    f.get();
                }
            } catch (ExecutionException e) {
                throw e.getCause() instanceof IOException io ? io
                        : new IOException("a benchmark node failed: " + e.getCause(), e.getCause());
            } finally {
                threads.shutdownNow();
                threads.awaitTermination(10, TimeUnit.SECONDS);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            for (IomapFile file : files) {
                file.close();
            }
            return nodes.row("independent", (long) count * ops, seconds, before);
        }
    }

    private static void write(IomapFile file, long at, int seed) throws IOException {
        byte[] bytes = new byte[IO];
        java.util.Arrays.fill(bytes, (byte) seed);
        ByteBuffer src = ByteBuffer.wrap(bytes);
        while (src.hasRemaining()) {
            file.write(at + src.position(), src);
        }
    }

    private static void read(IomapFile file, long at) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(IO);
        while (dst.hasRemaining() && file.read(at + dst.position(), dst) > 0) {
            // reads the block
        }
    }

    /** Mounted nodes with their clients; closing unmounts them and closes the clients. */
    private final class Nodes implements AutoCloseable {
        final List<IomapFileSystem> fs = new ArrayList<>();
        private final List<CuratorFramework> clients = new ArrayList<>();

        /** Counters of every node at one moment. */
        record Snapshot(long requests, long grants) {
        }

        Nodes(int count) throws IOException, InterruptedException {
            try {
                for (int n = 0; n < count; n++) {
                    CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connectString)
                            .sessionTimeoutMs(15_000).connectionTimeoutMs(10_000)
                            .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
                    clients.add(client);
                    client.start();
                    if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
                        throw new IOException("no connection to ZooKeeper at " + connectString);
                    }
                    String id = "bench-" + ProcessHandle.current().pid() + "-" + n;
                    fs.add(mounter.mount(new ZkClusterJoin(client, id, Duration.ofMillis(500)), device));
                }
            } catch (IOException | InterruptedException | RuntimeException e) {
                try {
                    close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }

        Snapshot snapshot() {
            long requests = 0;
            long grants = 0;
            for (IomapFileSystem node : fs) {
                Map<String, Long> counters = node.stats().adapterCounters();
                requests += counters.getOrDefault("glock.zk.requests", 0L);
                grants += counters.getOrDefault("glock.grants", 0L);
            }
            return new Snapshot(requests, grants);
        }

        /** Waits (up to 10 s) until no node's counters changed for 200 ms: demoter threads are done. */
        Snapshot settle() throws InterruptedException {
            Snapshot last = snapshot();
            long stableSince = System.nanoTime();
            long end = stableSince + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < end) {
                Thread.sleep(20);
                Snapshot now = snapshot();
                if (!now.equals(last)) {
                    last = now;
                    stableSince = System.nanoTime();
                } else if (System.nanoTime() - stableSince > TimeUnit.MILLISECONDS.toNanos(200)) {
                    break;
                }
            }
            return last;
        }

        Row row(String scenario, long count, double seconds, Snapshot before) throws InterruptedException {
            Snapshot after = settle();
            return new Row(scenario, fs.size(), count, seconds, (double) (after.requests() - before.requests()) / count,
                    (double) (after.grants() - before.grants()) / count, count / seconds,
                    count * (double) IO / seconds / (1 << 20));
        }

        @Override
        public void close() throws IOException {
            IOException failure = null;
            for (int n = fs.size() - 1; n >= 0; n--) {
                try {
                    fs.get(n).close();
                } catch (IOException | UncheckedIOException e) {
                    if (failure == null) {
                        failure = new IOException("unmounting benchmark node " + n + " failed", e);
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
            for (CuratorFramework client : clients) {
                client.close();
            }
            if (failure != null) {
                throw failure;
            }
        }
    }
}
