package dev.iomap.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * A standalone ZooKeeper server inside this JVM, through ZooKeeper's own embedding API
 * ({@link ZooKeeperServerEmbedded}), for trying a cluster filesystem on one machine: bound to
 * 127.0.0.1 only, its snapshots and transaction log in a directory the caller gives, no admin HTTP
 * server. Not a production ensemble (one server, no quorum). {@link #startMember} runs instead one
 * server of an ensemble (bound to its own host's address), one per host or process;
 * {@link ZooKeeperEnsemble} runs a whole ensemble in one JVM.
 *
 * <p>{@link #close} stops it; the data directory stays (the caller deletes it). Thread-safe.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    /** The tick: session timeouts are negotiated between 2 and 20 ticks. */
    public static final int TICK_MILLIS = 500;

    /** The standalone server, or null for an ensemble member. */
    private final ZooKeeperServerEmbedded server;
    /** The ensemble member, or null for a standalone server. */
    private final QuorumMember member;
    private final String host;
    private final int port;

    private EmbeddedZooKeeper(ZooKeeperServerEmbedded server, QuorumMember member, String host, int port) {
        this.server = server;
        this.member = member;
        this.host = host;
        this.port = port;
    }

    /**
     * Starts a server and waits until it serves.
     *
     * @param dataDir where its snapshots and log go (created if missing)
     * @param port the client port on 127.0.0.1, 1 to 65535
     * @return the running server
     * @throws IOException if it could not start (the port is taken, the directory not writable)
     */
    public static EmbeddedZooKeeper start(Path dataDir, int port) throws IOException {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("client port " + port + " is not 1 to 65535");
        }
        Files.createDirectories(dataDir);
        Properties config = new Properties();
        config.setProperty("tickTime", Integer.toString(TICK_MILLIS));
        config.setProperty("dataDir", dataDir.resolve("data").toString());
        config.setProperty("clientPort", Integer.toString(port));
        config.setProperty("clientPortAddress", "127.0.0.1");
        config.setProperty("admin.enableServer", "false");
        config.setProperty("4lw.commands.whitelist", "");
        ZooKeeperServerEmbedded server = null;
        try {
            server = ZooKeeperServerEmbedded.builder().baseDir(dataDir).configuration(config)
                    .exitHandler(ExitHandler.LOG_ONLY).build();
            server.start(30_000);
            return new EmbeddedZooKeeper(server, null, "127.0.0.1", port);
        } catch (Exception e) {
            if (server != null) {
                server.close();
            }
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("the embedded ZooKeeper did not start on 127.0.0.1:" + port + ": " + e, e);
        }
    }

    /**
     * Starts server {@code id} of an ensemble in this JVM, bound to that server's host (its client,
     * quorum and election ports), and waits until it runs; it serves clients once a majority of the
     * ensemble's servers run.
     *
     * @param dataDir where its {@code myid}, snapshots and log go (created if missing)
     * @param id which of {@code servers} this is
     * @param servers every server of the ensemble, this one included
     * @return the running server; {@link #connectString()} is this server's client address only
     * @throws IllegalArgumentException if {@code id} is not one of {@code servers}
     * @throws IOException if it could not start (a port taken, the directory not writable)
     */
    public static EmbeddedZooKeeper startMember(Path dataDir, int id, List<EnsembleServer> servers)
            throws IOException {
        QuorumMember member = QuorumMember.start(dataDir, id, servers, ZooKeeperEnsemble.START_TIMEOUT.toMillis());
        return new EmbeddedZooKeeper(null, member, member.server().host(), member.server().clientPort());
    }

    /** @return the connect string for clients: {@code <host>:<port>} ({@code 127.0.0.1} for a standalone server) */
    public String connectString() {
        return host + ":" + port;
    }

    /** @return the client port */
    public int port() {
        return port;
    }

    /** Stops the server; clients lose their connection. Idempotent. */
    @Override
    public void close() {
        if (server != null) {
            server.close();
        } else {
            member.close();
        }
    }
}
