package dev.iomap.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * A real ZooKeeper server (Curator's {@link TestingServer}) on 127.0.0.1 with a fresh data directory,
 * and the Curator clients a test opened on it; {@link #close} closes every client still open, then
 * the server, and deletes the directory.
 */
final class ZkTestServer implements AutoCloseable {
    /** Session timeout of ordinary test clients: long enough for a loaded 2-core machine. */
    static final Duration SESSION = Duration.ofSeconds(15);

    /**
     * Our temporary directory: the server's data directory is {@code data} inside it, because Curator
     * writes the server's generated {@code zookeeper.configuration*.properties} into the data
     * directory's parent and never deletes it; here that parent is ours and goes on {@link #close}.
     */
    private final Path dir;
    private final TestingServer server;
    private final List<CuratorFramework> clients = new ArrayList<>();

    ZkTestServer() throws Exception {
        this(false);
    }

    /**
     * @param noFsync whether the server skips the fsync of its transaction log per request
     *     ({@code zookeeper.forceSync=no}, read when the server starts): a round trip then costs well under
     *     a millisecond instead of 1-2 ms on a loaded machine; for the long model runs, whose time is
     *     almost all ZooKeeper round trips (a test server's durability does not matter)
     */
    ZkTestServer(boolean noFsync) throws Exception {
        String forceSync = System.getProperty("zookeeper.forceSync");
        if (noFsync) {
            System.setProperty("zookeeper.forceSync", "no");
        }
        dir = Files.createTempDirectory("iomap-zk-test");
        try {
            server = start(dir);
        } catch (Exception | Error e) {
            deleteTree(dir);
            throw e;
        } finally {
            if (noFsync) {
                if (forceSync == null) {
                    System.clearProperty("zookeeper.forceSync");
                } else {
                    System.setProperty("zookeeper.forceSync", forceSync);
                }
            }
        }
    }

    private static TestingServer start(Path dir) throws Exception {
        Path data = Files.createDirectory(dir.resolve("data"));
        InstanceSpec spec = new InstanceSpec(data.toFile(), -1, -1, -1, true, -1, 200, 100,
                Map.of("clientPortAddress", "127.0.0.1", "admin.enableServer", "false",
                        "maxSessionTimeout", "60000"), "127.0.0.1");
        return new TestingServer(spec, true);
    }

    String connectString() {
        return server.getConnectString();
    }

    /** @return a started client with {@link #SESSION}, connected */
    CuratorFramework client() throws InterruptedException {
        return client(SESSION);
    }

    /** @return a started client with the given session timeout, connected */
    synchronized CuratorFramework client(Duration session) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connectString())
                .sessionTimeoutMs((int) session.toMillis()).connectionTimeoutMs(10_000)
                .retryPolicy(new RetryOneTime(100)).build();
        clients.add(client);
        client.start();
        if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no connection to the test ZooKeeper at " + connectString());
        }
        return client;
    }

    /**
     * Closes {@code client}'s session on the server at once, as if its machine died: a second connection
     * with the same session id and password closes it (the server deletes its ephemeral znodes now), and
     * the client learns at its next contact that its session expired.
     *
     * @param client a connected client of this server
     */
    void killSession(CuratorFramework client) throws Exception {
        ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper other = new ZooKeeper(connectString(), (int) SESSION.toMillis(), event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, zk.getSessionId(), zk.getSessionPasswd());
        try {
            if (!connected.await(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no second connection to session " + zk.getSessionId());
            }
        } finally {
            other.close();
        }
    }

    /**
     * Stops the server, as if its machine went down: its data directory stays, for {@link #restart}.
     * Clients keep their sessions' state and try to reconnect.
     */
    void stop() throws IOException {
        server.stop();
    }

    /**
     * Starts the server stopped by {@link #stop} again on the same port and data directory: it loads its
     * snapshot and transaction log, so every znode and every session is back (a session not reconnected
     * expires after its timeout, counted from the restart).
     */
    void restart() throws Exception {
        server.restart();
    }

    /** Polls {@code condition} every 10 ms for up to 20 s. */
    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }

    /** Closes every client opened so far (between tests sharing the server). */
    synchronized void closeClients() {
        for (CuratorFramework client : clients) {
            client.close();
        }
        clients.clear();
    }

    @Override
    public synchronized void close() throws IOException {
        try {
            for (CuratorFramework client : clients) {
                client.close();
            }
        } finally {
            try {
                server.close();
            } finally {
                deleteTree(dir);
            }
        }
    }

    /** Deletes {@code root} and everything under it, deepest first; gone already is fine. */
    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
