package dev.iomap.cli;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.cluster.ClusterBench;
import dev.iomap.cluster.EmbeddedZooKeeper;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.spi.AdapterMounts;
import dev.iomap.spi.FileSystemAdapter;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code iomap cluster-bench}: what glocks on ZooKeeper cost gfs2-like nodes sharing one image
 * ({@link ClusterBench}: ZooKeeper round trips per operation on each node's own files, the cost of a
 * handoff when two nodes write one file in turns, throughput of independent files on 1 to 3 nodes). The
 * nodes run in this process, each with its own ZooKeeper session, on one sparse image file made (and
 * deleted) in {@code --dir}; ZooKeeper is {@code --zk}, or an embedded server on a free port of
 * 127.0.0.1 started and stopped by the command.
 */
@Command(name = "cluster-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Measures gfs2-like cluster nodes on ZooKeeper glocks: round trips per operation on own"
                + " files, the cost per handoff of one file written in turns, and 1 to 3 nodes on independent"
                + " files.", "The image is a sparse file in --dir, deleted afterwards."})
final class ClusterBenchCommand implements Callable<Integer> {
    private static final long IMAGE_BYTES = 512L << 20;

    @Spec
    private CommandSpec spec;

    @Option(names = "--zk", paramLabel = "HOST:PORT[,...]",
            description = "the ZooKeeper ensemble (default: an embedded server on 127.0.0.1, for this run only)")
    private String zk;

    @Option(names = "--ops", paramLabel = "N", defaultValue = "1000",
            description = "operations per node and scenario (default: ${DEFAULT-VALUE})")
    private int ops;

    @Option(names = "--dir", paramLabel = "DIR", defaultValue = ".",
            description = "where the image file is made (default: the current directory)")
    private Path dir;

    @Override
    public Integer call() throws Exception {
        if (ops < 1) {
            throw new UsageException("bad --ops " + ops + ": give 1 or more");
        }
        if (!Files.isDirectory(dir)) {
            throw new UsageException("--dir " + dir + " is not a directory");
        }
        PrintWriter out = spec.commandLine().getOut();
        FileSystemAdapter gfs2 = Adapters.named("gfs2-like");
        Path image = Files.createTempFile(dir, "iomap-cluster-bench-", ".img");
        Path zkDir = zk == null ? Files.createTempDirectory("iomap-cluster-bench-zk-") : null;
        EmbeddedZooKeeper server = null;
        try {
            String connect = zk;
            if (zkDir != null) {
                server = EmbeddedZooKeeper.start(zkDir, freePort());
                connect = server.connectString();
            }
            try (FileBlockDevice device = FileBlockDevice.open(image, 4096, IMAGE_BYTES, false)) {
                IomapFileSystems.format(gfs2.name(), device,
                        new FormatOptions(4096, "bench", Map.of("journals", "3")));
                out.printf("cluster-bench: gfs2-like, 3 nodes in this process, ZooKeeper %s, %s (%d MiB sparse),"
                        + " %d ops per node and scenario%n", connect, image, IMAGE_BYTES >> 20, ops);
                out.flush();
                List<ClusterBench.Row> rows = new ClusterBench(connect,
                        (join, shared) -> AdapterMounts.mount(gfs2.clusterNode(join), shared, MountOptions.defaults()),
                        device, ops).run();
                out.print(ClusterBench.table(rows));
                out.flush();
            }
            return 0;
        } finally {
            if (server != null) {
                server.close();
            }
            Files.deleteIfExists(image);
            if (zkDir != null) {
                delete(zkDir);
            }
        }
    }

    /** @return a port of 127.0.0.1 that was free a moment ago */
    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static void delete(Path tree) throws IOException {
        try (Stream<Path> paths = Files.walk(tree)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
