package dev.iomap.cluster;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import org.apache.zookeeper.server.quorum.QuorumPeer;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;

/**
 * One server of a ZooKeeper ensemble running in this JVM: ZooKeeper's own {@link QuorumPeerMain} on a
 * thread of its own, configured as {@link EmbeddedZooKeeper} configures a standalone server (500 ms
 * tick, bound to its host only, no admin server, no four-letter words) plus the ensemble's
 * {@code server.N} lines and {@code initLimit}/{@code syncLimit}. {@link #close} shuts the peer down and
 * waits for its thread. Thread-safe.
 */
final class QuorumMember implements AutoCloseable {
    /** Ticks a follower has to connect to and sync with a leader. */
    private static final int INIT_LIMIT = 10;
    /** Ticks a follower may lag behind the leader. */
    private static final int SYNC_LIMIT = 5;
    /** How long {@link #close} waits for the server's thread. */
    private static final int STOP_SECONDS = 30;

    private final EnsembleServer self;
    private final Runner main = new Runner();
    private final Thread thread;

    /** {@link QuorumPeerMain} that hands out the peer it runs, and what its run ended with. */
    private static final class Runner extends QuorumPeerMain {
        /** Completes when {@code runFromConfig} returns or throws. */
        final CompletableFuture<Void> ended = new CompletableFuture<>();

        QuorumPeer peer() {
            return quorumPeer;
        }
    }

    private QuorumMember(EnsembleServer self, QuorumPeerConfig config) {
        this.self = self;
        this.thread = Thread.ofPlatform().name("iomap-zookeeper-" + self.id()).daemon().unstarted(() -> {
            try {
                main.runFromConfig(config);
                main.ended.complete(null);
            } catch (Exception e) {
                main.ended.completeExceptionally(e);
            }
        });
    }

    /**
     * Starts server {@code id} of {@code servers} and waits until it runs (it serves clients once it has
     * a quorum).
     *
     * @param dataDir where its {@code myid}, snapshots and log go (created if missing)
     * @param id which of {@code servers} this is
     * @param servers the whole ensemble
     * @param timeoutMillis how long to wait for it to start
     * @return the running member
     * @throws IOException if it could not start (a port taken, the directory not writable)
     */
    static QuorumMember start(Path dataDir, int id, List<EnsembleServer> servers, long timeoutMillis)
            throws IOException {
        EnsembleServer self = servers.stream().filter(s -> s.id() == id).findFirst().orElseThrow(
                () -> new IllegalArgumentException("server " + id + " is not one of " + servers));
        Path data = Files.createDirectories(dataDir.resolve("data"));
        Files.writeString(data.resolve("myid"), id + "\n");
        QuorumPeerConfig config = new QuorumPeerConfig();
        try {
            config.parseProperties(properties(data, self, servers));
        } catch (QuorumPeerConfig.ConfigException e) {
            throw new IOException("bad ensemble configuration for server " + id + ": " + e.getMessage(), e);
        }
        var member = new QuorumMember(self, config);
        member.thread.start();
        try {
            member.awaitListening(timeoutMillis);
            return member;
        } catch (IOException | RuntimeException e) {
            member.close();
            throw e;
        }
    }

    /**
     * Waits until the server takes client connections: the peer opens its client port when it starts,
     * before it has a quorum (a server without one closes each connection at once).
     */
    private void awaitListening(long timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            if (main.ended.isDone()) {
                throw new IOException("ZooKeeper server " + self + " did not start: " + endedWith());
            }
            try (var socket = new Socket()) {
                socket.connect(new InetSocketAddress(self.host(), self.clientPort()), 1000);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("ZooKeeper server " + self + " did not open its client port within "
                            + timeoutMillis + " ms", e);
                }
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while starting ZooKeeper server " + self, e);
            }
        }
    }

    /** @return why the server's run ended, for a message */
    private String endedWith() {
        try {
            main.ended.get();
            return "it stopped";
        } catch (ExecutionException e) {
            return String.valueOf(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private static Properties properties(Path data, EnsembleServer self, List<EnsembleServer> servers) {
        Properties config = new Properties();
        config.setProperty("tickTime", Integer.toString(EmbeddedZooKeeper.TICK_MILLIS));
        config.setProperty("initLimit", Integer.toString(INIT_LIMIT));
        config.setProperty("syncLimit", Integer.toString(SYNC_LIMIT));
        config.setProperty("dataDir", data.toString());
        config.setProperty("clientPort", Integer.toString(self.clientPort()));
        config.setProperty("clientPortAddress", self.host());
        config.setProperty("admin.enableServer", "false");
        config.setProperty("4lw.commands.whitelist", "");
        for (EnsembleServer server : servers) {
            config.setProperty("server." + server.id(), server.quorumAddress());
        }
        return config;
    }

    /** @return which server this is */
    EnsembleServer server() {
        return self;
    }

    /** @return {@code leading}, {@code following}, {@code looking} (no quorum) or {@code observing} */
    String role() {
        QuorumPeer peer = main.peer();
        return peer == null ? "stopped" : peer.getServerState();
    }

    /**
     * @return how many client sessions are connected to it now, as its JMX beans list them (one
     *     {@code Connections} bean per connection under the server's {@code ReplicatedServer_idN} bean)
     */
    int clientConnections() {
        try {
            Set<ObjectName> names = ManagementFactory.getPlatformMBeanServer()
                    .queryNames(new ObjectName("org.apache.ZooKeeperService:*"), null);
            String server = "ReplicatedServer_id" + self.id();
            return (int) names.stream().filter(name -> server.equals(name.getKeyProperty("name0"))
                    && "Connections".equals(name.getKeyProperty("name3"))).count();
        } catch (MalformedObjectNameException e) {
            throw new IllegalStateException("the ZooKeeper bean pattern does not parse", e);
        }
    }

    /**
     * Shuts the server down (its clients lose their connection) and waits for it, at most
     * {@value #STOP_SECONDS} s (a server still starting may not have a peer to shut down yet). Idempotent.
     */
    @Override
    public void close() {
        main.close();
        try {
            thread.join(Duration.ofSeconds(STOP_SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
