package dev.iomap.cluster;

import static dev.iomap.spi.lock.LockMode.EX;
import static dev.iomap.spi.lock.LockMode.SH;
import static dev.iomap.spi.lock.LockMode.UN;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 35 item 3: a demotion's transaction (lower the holder entry, delete the answered request)
 * reaches ZooKeeper but its reply does not reach the demoting node. The holder kept its old mode
 * locally while ZooKeeper recorded the lower one, so the requester was granted and the holder went on
 * using the mode it no longer had: two EX holders. The seam interrupts the demoter thread just before
 * the transaction, once: ZooKeeper's client has queued the transaction when its wait for the reply is
 * interrupted, so the server applies it and the caller is told it failed, as with a lost reply.
 */
class ZkDemoteReplyLostTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final LockName INODE = LockName.inode(7);
    private static ZkTestServer server;

    private final UUID filesystem = UUID.randomUUID();
    private final ZkPaths paths = new ZkPaths(filesystem);
    private final List<String> events = Recorder.newEventList();
    private final List<ZkLockManager> managers = new ArrayList<>();

    @BeforeAll
    static void startServer() throws Exception {
        server = new ZkTestServer();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @AfterEach
    void closeNodes() {
        try {
            for (ZkLockManager manager : managers) {
                try {
                    manager.close();
                } catch (Exception e) {
                    // the clients close below anyway
                }
            }
        } finally {
            server.closeClients();
        }
    }

    private ZkLockManager node(String id) throws Exception {
        ZkLockManager manager = new ZkLockManager(server.client(), filesystem, new Incarnation(id, 1), Fence.manual());
        managers.add(manager);
        return manager;
    }

    @ParameterizedTest(name = "A holds {0}, B asks {1}: A demotes to {2}")
    @CsvSource({"EX, EX, UN", "EX, SH, SH", "SH, EX, UN"})
    void aDemotionWhoseReplyIsLostLowersTheHoldersModeAsZooKeeperRecordedIt(LockMode held, LockMode asked,
            LockMode lowered) throws Exception {
        ZkLockManager a = node("A");
        ZkLockManager b = node("B");
        LockHandle onA = a.acquire(INODE, held, new Recorder("A", events, 0), WAIT);
        onA.unlock();
        AtomicBoolean once = new AtomicBoolean(true);
        a.beforeChangeForTesting(() -> {
            if (Thread.currentThread().getName().startsWith("iomap-glock-demoter") && once.getAndSet(false)) {
                Thread.currentThread().interrupt();
            }
        });

        LockHandle onB = b.acquire(INODE, asked, new Recorder("B", events, 0), WAIT);

        assertThat(once).as("the seam ran").isFalse();
        assertThat(holderEntries()).as("what ZooKeeper recorded")
                .containsExactlyInAnyOrderElementsOf(lowered == UN ? List.of(entryOf(b, asked))
                        : List.of(entryOf(a, lowered), entryOf(b, asked)));
        assertThat(onA.mode()).as("A's handle agrees with ZooKeeper").isEqualTo(lowered);
        assertThat(onA.lockIfCached(EX)).as("A uses no EX it gave up").isFalse();
        assertThat(a.stats().demotions()).isEqualTo(1);
        onB.unlock();
        if (lowered == SH) {
            onA.lock(SH, WAIT);
            onA.unlock();
        }
    }

    private static String entryOf(ZkLockManager manager, LockMode mode) {
        return manager.incarnation() + ".1=" + mode;
    }

    private List<String> holderEntries() throws Exception {
        CuratorFramework observer = server.client();
        return observer.getChildren().forPath(paths.holders(INODE)).stream().sorted().toList();
    }
}
