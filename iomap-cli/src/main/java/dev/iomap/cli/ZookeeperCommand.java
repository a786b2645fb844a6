package dev.iomap.cli;

import dev.iomap.cluster.EmbeddedZooKeeper;
import dev.iomap.cluster.EnsembleServer;
import dev.iomap.cluster.ZooKeeperEnsemble;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
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
 *
 * <p>{@code --ensemble} runs a three-server ensemble instead ({@link ZooKeeperEnsemble}), all three in this
 * process (one Ctrl-C stops the ensemble; for trying a quorum on one machine), on 127.0.0.1 with three ports
 * each counted from {@code --port P}: client ports P..P+2, quorum ports P+707.. and election ports P+1707..
 * (2181-2183, 2888-2890, 3888-3890 by default), each server's data in {@code server-N} under the data
 * directory. With {@code --server-id N --servers 1=HOST:CLIENT:QUORUM:ELECTION,2=...} the process runs
 * server N of that ensemble only ({@link EmbeddedZooKeeper#startMember}), bound to its own host: one per host
 * (or per process, to stop servers one by one), as an ensemble across machines runs.
 */
@Command(name = "zookeeper", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Runs a ZooKeeper server on 127.0.0.1 in the foreground for cluster mounts on this machine"
                + " (iomap mount --adapter gfs2-like --cluster zk=127.0.0.1:PORT IMAGE DIR).",
                "Ctrl-C stops it. One server, no quorum: for trying things out, not for production.",
                "--ensemble runs three servers (a quorum survives the loss of one) in this process;"
                        + " --server-id N --servers LIST runs one server of an ensemble across hosts."})
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

    @Option(names = "--ensemble", description = "run a three-server ensemble in this process, on 127.0.0.1:"
            + " client ports --port to --port+2, quorum ports --port+707.., election ports --port+1707..")
    private boolean ensemble;

    @Option(names = "--server-id", paramLabel = "N", description = "with --servers: run server N of that ensemble")
    private Integer serverId;

    @Option(names = "--servers", paramLabel = "ID=HOST:CLIENT:QUORUM:ELECTION[,...]",
            description = "with --server-id: every server of the ensemble, e.g. 1=10.0.0.1:2181:2888:3888,...")
    private String servers;

    /**
     * What this process serves: a standalone server, an ensemble, or one member of one.
     *
     * @param connectString the clients' connect string
     * @param stop stops it
     */
    private record Serving(String connectString, Runnable stop) {
        /** Stops it. */
        void close() {
            stop.run();
        }
    }

    @Override
    public Integer call() throws Exception {
        if (port < 1 || port > 65535) {
            throw new UsageException("bad --port " + port + ": give 1 to 65535");
        }
        Path dir = data != null ? data : Files.createTempDirectory("iomap-zookeeper-");
        Serving server;
        try {
            server = serve(dir);
        } catch (IOException | RuntimeException | UsageException e) {
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
        out.println("zookeeper " + (ensemble ? "ensemble " : "") + "serving on " + server.connectString()
                + " (data in " + dir + ")");
        out.println("mount a node: iomap mount --adapter gfs2-like --cluster zk=" + server.connectString()
                + " IMAGE DIR");
        out.flush();
        System.err.println("iomap: Ctrl-C stops the server");
        stopped.await();
        return 0;
    }

    /** @return the server, ensemble or member the options ask for, started in {@code dir} */
    private Serving serve(Path dir) throws IOException, UsageException {
        if ((serverId == null) != (servers == null)) {
            throw new UsageException("--server-id and --servers go together: give both, or neither");
        }
        if (serverId != null) {
            if (ensemble) {
                throw new UsageException("--ensemble runs all three servers here; --server-id runs one: give one or"
                        + " the other");
            }
            List<EnsembleServer> members;
            try {
                members = EnsembleServer.parseList(servers);
            } catch (IllegalArgumentException e) {
                throw new UsageException("bad --servers: " + e.getMessage());
            }
            if (members.stream().noneMatch(member -> member.id() == serverId)) {
                throw new UsageException("--server-id " + serverId + " is not one of --servers " + servers);
            }
            EmbeddedZooKeeper member = EmbeddedZooKeeper.startMember(dir, serverId, members);
            return new Serving(EnsembleServer.connectString(members), member::close);
        }
        if (ensemble) {
            List<EnsembleServer> three;
            try {
                three = EnsembleServer.onLoopback(port);
            } catch (IllegalArgumentException e) {
                throw new UsageException("bad --port " + port + " for --ensemble: " + e.getMessage());
            }
            ZooKeeperEnsemble running = ZooKeeperEnsemble.start(dir, three);
            return new Serving(running.connectString(), running::close);
        }
        EmbeddedZooKeeper standalone = EmbeddedZooKeeper.start(dir, port);
        return new Serving(standalone.connectString(), standalone::close);
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
