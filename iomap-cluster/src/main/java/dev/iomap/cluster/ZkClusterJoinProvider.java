package dev.iomap.cluster;

import dev.iomap.api.ClusterSpec;
import dev.iomap.spi.lock.ClusterConnection;
import dev.iomap.spi.lock.ClusterJoin;
import dev.iomap.spi.lock.ClusterJoinProvider;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The {@code zk} cluster scheme ({@code zk=HOST:PORT[,HOST:PORT...][/CHROOT][?fence=PROGRAM]}, a ZooKeeper
 * connect string): each mount gets a Curator client of its own, whose session is the node's life in the
 * cluster, and joins through a {@link ZkClusterJoin} on it. Listed for {@link java.util.ServiceLoader}.
 * {@code fence=PROGRAM} (an absolute path) makes the node fence a dead node's host with that program
 * ({@link ProgramFenceAgent}) before it replays the dead node's journal; without it nobody is fenced.
 *
 * <p>The client: session timeout {@link #SESSION_TIMEOUT} (10 s, the most a server with ZooKeeper's
 * default limits and {@link EmbeddedZooKeeper}'s 500 ms tick grants: 20 ticks), first connection within
 * {@link #CONNECT_TIMEOUT}; a request that finds the connection lost waits {@link #REQUEST_CONNECTION_WAIT}
 * for it and is then retried for as long as the node's lease lasts (the retry policy the {@link Fence}
 * sets; until the node joined, {@code ExponentialBackoffRetry(250 ms, 5 times, at most 2 s apart)}), so a
 * short connection loss delays operations and a long one fails them when the lease ends; the recovery
 * margin is {@link #RECOVERY_MARGIN}. Without a node id in the
 * spec, the node id is this host's name (letters, digits and '-' only, at most 40) and a random suffix of
 * 8 letters and digits, e.g. {@code build-7-k3x9q0ab}: unique per mount, also for two mounts of one host.
 * Thread-safe.
 */
public final class ZkClusterJoinProvider implements ClusterJoinProvider {
    /** The session timeout the client asks for. */
    public static final Duration SESSION_TIMEOUT = Duration.ofSeconds(10);
    /** How long {@link #connect} waits for the first connection. */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /**
     * How long a ZooKeeper request that finds the connection lost first waits for it (Curator's connection
     * timeout) before the lease-bounded retries take over: short, so that the wait ends near the lease's end.
     */
    public static final Duration REQUEST_CONNECTION_WAIT = Duration.ofSeconds(1);
    /** How long survivors wait after a node's session expired before replaying its journal. */
    public static final Duration RECOVERY_MARGIN = Duration.ofSeconds(3);

    private static final Pattern CONNECT_STRING =
            Pattern.compile("[A-Za-z0-9.\\-\\[\\]:]+:\\d{1,5}(,[A-Za-z0-9.\\-\\[\\]:]+:\\d{1,5})*(/[A-Za-z0-9_\\-/]*)?");
    private static final SecureRandom RANDOM = new SecureRandom();

    /** For {@link java.util.ServiceLoader}. */
    public ZkClusterJoinProvider() {
    }

    /** @return {@code zk} */
    @Override
    public String scheme() {
        return "zk";
    }

    /**
     * Starts a Curator client on the spec's connect string and waits up to {@link #CONNECT_TIMEOUT} for it.
     *
     * @throws IllegalArgumentException if the address is not {@code HOST:PORT[,HOST:PORT...][/CHROOT]},
     *     optionally followed by {@code ?fence=PROGRAM} with an absolute path
     * @throws IOException if ZooKeeper did not answer in time (the client is closed again)
     */
    @Override
    public ClusterConnection connect(ClusterSpec spec) throws IOException {
        if (!spec.scheme().equals(scheme())) {
            throw new IllegalArgumentException("not a zk= cluster: " + spec);
        }
        String address = spec.address();
        FenceAgent agent = FenceAgent.NONE;
        int query = address.indexOf('?');
        if (query >= 0) {
            agent = fenceAgent(spec.address().substring(query + 1));
            address = address.substring(0, query);
        }
        if (!CONNECT_STRING.matcher(address).matches()) {
            throw new IllegalArgumentException("zk=" + address + " is not HOST:PORT[,HOST:PORT...][/CHROOT]");
        }
        String nodeId = spec.nodeId().orElseGet(ZkClusterJoinProvider::newNodeId);
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(address)
                .sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs((int) REQUEST_CONNECTION_WAIT.toMillis())
                .retryPolicy(new ExponentialBackoffRetry(250, 5, 2000)).build();
        try {
            client.start();
            if (!client.blockUntilConnected((int) CONNECT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("cannot reach ZooKeeper at " + address + " within "
                        + CONNECT_TIMEOUT.toSeconds() + " s (is it running? iomap zookeeper starts one)");
            }
            return new Connection(client, new ZkClusterJoin(client, nodeId, RECOVERY_MARGIN, agent), nodeId);
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while connecting to ZooKeeper at " + address);
        } catch (IOException | RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * @param options what follows {@code ?} in the address: {@code fence=PROGRAM}
     * @return the agent it names
     * @throws IllegalArgumentException if it is anything else, or the program's path is not absolute
     */
    static FenceAgent fenceAgent(String options) {
        if (!options.startsWith("fence=")) {
            throw new IllegalArgumentException("zk=...?" + options + ": the only option is fence=PROGRAM");
        }
        java.nio.file.Path program = java.nio.file.Path.of(options.substring("fence=".length()));
        if (!program.isAbsolute()) {
            throw new IllegalArgumentException("zk=...?fence=" + program + ": the fence agent needs an absolute path");
        }
        return ProgramFenceAgent.of(program);
    }

    /**
     * @return a node id unique per call: this host's name (cut to letters, digits and '-', at most 40),
     *     '-', and 8 random letters and digits
     */
    public static String newNodeId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "node";
        }
        host = host.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]+", "-").replaceAll("^-+|-+$", "");
        if (host.length() > 40) {
            host = host.substring(0, 40);
        }
        if (host.isEmpty()) {
            host = "node";
        }
        StringBuilder suffix = new StringBuilder();
        String digits = "abcdefghijklmnopqrstuvwxyz0123456789";
        for (int i = 0; i < 8; i++) {
            suffix.append(digits.charAt(RANDOM.nextInt(digits.length())));
        }
        return ClusterSpec.checkNodeId(host + "-" + suffix);
    }

    /** One mount's client and join; closing closes the client (ending its session). */
    private static final class Connection implements ClusterConnection {
        private final CuratorFramework client;
        private final ZkClusterJoin join;
        private final String nodeId;

        Connection(CuratorFramework client, ZkClusterJoin join, String nodeId) {
            this.client = client;
            this.join = join;
            this.nodeId = nodeId;
        }

        @Override
        public ClusterJoin join() {
            return join;
        }

        @Override
        public String nodeId() {
            return nodeId;
        }

        @Override
        public void close() {
            client.close();
        }

        @Override
        public String toString() {
            return "ZooKeeper node " + nodeId;
        }
    }
}
