package dev.iomap.cli;

import dev.iomap.cluster.EmbeddedZooKeeper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code iomap zookeeper}: runs ZooKeeper's own embedded server ({@link EmbeddedZooKeeper}) on 127.0.0.1
 * in the foreground, for cluster mounts on this machine ({@code iomap mount --cluster zk=127.0.0.1:PORT}),
 * until Ctrl-C (or SIGTERM) stops it. It prints its connect string on the first line of standard output.
 * Without {@code --data} it keeps its snapshots and log in a new temporary directory, deleted when it stops.
 */
@Command(name = "zookeeper", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Runs a ZooKeeper server on 127.0.0.1 in the foreground for cluster mounts on this machine"
                + " (iomap mount --adapter gfs2-like --cluster zk=127.0.0.1:PORT IMAGE DIR).",
                "Ctrl-C stops it. One server, no quorum: for trying things out, not for production."})
final class ZookeeperCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Option(names = "--port", paramLabel = "N", defaultValue = "2181",
            description = "the client port on 127.0.0.1 (default: ${DEFAULT-VALUE})")
    private int port;

    @Option(names = "--data", paramLabel = "DIR",
            description = "where it keeps its snapshots and transaction log (default: a new temporary directory,"
                    + " deleted when it stops)")
    private Path data;

    @Override
    public Integer call() throws Exception {
        if (port < 1 || port > 65535) {
            throw new UsageException("bad --port " + port + ": give 1 to 65535");
        }
        Path dir = data != null ? data : Files.createTempDirectory("iomap-zookeeper-");
        EmbeddedZooKeeper server;
        try {
            server = EmbeddedZooKeeper.start(dir, port);
        } catch (IOException | RuntimeException e) {
            if (data == null) {
                delete(dir);
            }
            throw e;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        PrintWriter out = spec.commandLine().getOut();
        Thread hook = Thread.ofPlatform().name("iomap-zookeeper-stop").unstarted(() -> {
            server.close();
            if (data == null) {
                delete(dir);
            }
            System.err.println("iomap: zookeeper on " + server.connectString() + " stopped");
            stopped.countDown();
        });
        Runtime.getRuntime().addShutdownHook(hook);
        out.println("zookeeper serving on " + server.connectString() + " (data in " + dir + ")");
        out.println("mount a node: iomap mount --adapter gfs2-like --cluster zk=" + server.connectString()
                + " IMAGE DIR");
        out.flush();
        System.err.println("iomap: Ctrl-C stops the server");
        stopped.await();
        return 0;
    }

    /** Deletes a directory tree, or reports on stderr why it could not. */
    private static void delete(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | UncheckedIOException e) {
            System.err.println("iomap: could not delete " + dir + ": " + e.getMessage());
        }
    }
}
