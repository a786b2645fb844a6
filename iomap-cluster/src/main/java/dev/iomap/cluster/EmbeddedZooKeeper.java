package dev.iomap.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * A standalone ZooKeeper server inside this JVM, through ZooKeeper's own embedding API
 * ({@link ZooKeeperServerEmbedded}), for trying a cluster filesystem on one machine: bound to
 * 127.0.0.1 only, its snapshots and transaction log in a directory the caller gives, no admin HTTP
 * server. Not a production ensemble (one server, no quorum).
 *
 * <p>{@link #close} stops it; the data directory stays (the caller deletes it). Thread-safe.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    /** The tick: session timeouts are negotiated between 2 and 20 ticks. */
    public static final int TICK_MILLIS = 500;

    private final ZooKeeperServerEmbedded server;
    private final int port;

    private EmbeddedZooKeeper(ZooKeeperServerEmbedded server, int port) {
        this.server = server;
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
            return new EmbeddedZooKeeper(server, port);
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

    /** @return the connect string for clients: {@code 127.0.0.1:<port>} */
    public String connectString() {
        return "127.0.0.1:" + port;
    }

    /** @return the client port */
    public int port() {
        return port;
    }

    /** Stops the server; clients lose their connection. Idempotent. */
    @Override
    public void close() {
        server.close();
    }
}
