package dev.iomap.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * A ZooKeeper ensemble of several servers in this JVM ({@link QuorumMember}s), each with its own data
 * directory ({@code server-ID} in the directory given) and its own three ports, for cluster mounts on one
 * machine and for tests: one process, so one Ctrl-C or {@link #close} stops it, and a test can stop and
 * restart single servers ({@link #stop}, {@link #restart}) to take the quorum away and give it back.
 * Clients use {@link #connectString()}, every server's client address. For servers on several hosts run
 * one per host ({@link EmbeddedZooKeeper#startMember}). Thread-safe.
 */
public final class ZooKeeperEnsemble implements AutoCloseable {
    /** How long a server may take to start, and the ensemble to elect a leader. */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final Path dir;
    private final List<EnsembleServer> servers;
    private final Map<Integer, QuorumMember> running = new LinkedHashMap<>();

    private ZooKeeperEnsemble(Path dir, List<EnsembleServer> servers) {
        this.dir = dir;
        this.servers = servers;
    }

    /**
     * Starts every server and waits until the ensemble serves (a leader elected).
     *
     * @param dir where each server's data directory goes ({@code server-ID}; created if missing)
     * @param servers the ensemble, e.g. {@link EnsembleServer#onLoopback}
     * @return the running ensemble, which the caller must close
     * @throws IOException if a server could not start, or no leader was elected within {@link #START_TIMEOUT}
     *     (every server started is stopped again)
     */
    public static ZooKeeperEnsemble start(Path dir, List<EnsembleServer> servers) throws IOException {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("an ensemble needs servers");
        }
        var ensemble = new ZooKeeperEnsemble(dir, List.copyOf(servers));
        try {
            for (EnsembleServer server : servers) {
                ensemble.restart(server.id());
            }
            ensemble.awaitQuorum(START_TIMEOUT);
            return ensemble;
        } catch (IOException | RuntimeException e) {
            ensemble.close();
            throw e;
        }
    }

    /** @return the clients' connect string: every server's {@code HOST:CLIENT} */
    public String connectString() {
        return EnsembleServer.connectString(servers);
    }

    /** @return the servers, running or not */
    public List<EnsembleServer> servers() {
        return servers;
    }

    /**
     * Stops one server, as if its host died: its clients lose their connection and move to another
     * server; with fewer than a majority left the others stop serving. Idempotent.
     *
     * @param id the server
     */
    public void stop(int id) {
        QuorumMember member;
        synchronized (running) {
            member = running.remove(id);
        }
        if (member != null) {
            member.close();
        }
    }

    /**
     * Starts a stopped server again on its data directory; it rejoins the ensemble (serving once it has
     * a quorum). Does nothing if it runs.
     *
     * @param id the server
     * @throws IOException if it does not start
     */
    public void restart(int id) throws IOException {
        synchronized (running) {
            if (running.containsKey(id)) {
                return;
            }
            running.put(id, QuorumMember.start(dir.resolve("server-" + id), id, servers, START_TIMEOUT.toMillis()));
        }
    }

    /**
     * @param id a server
     * @return {@code leading}, {@code following}, {@code looking} (no quorum), or {@code stopped}
     */
    public String role(int id) {
        synchronized (running) {
            QuorumMember member = running.get(id);
            return member == null ? "stopped" : member.role();
        }
    }

    /**
     * @param id a server
     * @return how many clients are connected to it now (0 if stopped)
     */
    public int clientConnections(int id) {
        synchronized (running) {
            QuorumMember member = running.get(id);
            return member == null ? 0 : member.clientConnections();
        }
    }

    /**
     * Waits until a client can connect to the ensemble, which a server only lets it do while it is part of
     * a quorum.
     *
     * @param timeout how long to wait
     * @throws IOException if no server served within {@code timeout}
     */
    public void awaitQuorum(Duration timeout) throws IOException {
        var connected = new CountDownLatch(1);
        ZooKeeper client = new ZooKeeper(connectString(), EmbeddedZooKeeper.TICK_MILLIS * 20, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        try {
            if (!connected.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("the ZooKeeper ensemble " + connectString() + " did not serve within "
                        + timeout.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the ZooKeeper ensemble", e);
        } finally {
            try {
                client.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Stops every server. Idempotent; the data directories stay (the caller deletes them). */
    @Override
    public void close() {
        List<Integer> ids;
        synchronized (running) {
            ids = List.copyOf(running.keySet());
        }
        for (int id : ids) {
            stop(id);
        }
    }
}
