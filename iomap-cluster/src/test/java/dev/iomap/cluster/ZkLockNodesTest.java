package dev.iomap.cluster;

import static dev.iomap.spi.lock.LockMode.EX;
import static dev.iomap.spi.lock.LockMode.SH;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockName;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 item 5: a glock's znodes ({@code locks/<name>} with its queue and holders) were created at
 * its first use and never deleted, and every manager remembered every name it ever used, so a
 * long-lived cluster whose files come and go grew without bound. Now the znodes of a glock nobody
 * holds or waits for go with its last holder, and come back at its next use.
 */
class ZkLockNodesTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static ZkTestServer server;

    private final UUID filesystem = UUID.randomUUID();
    private final ZkPaths paths = new ZkPaths(filesystem);
    private final List<String> events = Recorder.newEventList();
    private final List<ZkLockManager> managers = new ArrayList<>();
    private CuratorFramework observer;

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

    @Test
    void aGlockNobodyHoldsOrWaitsForLeavesNoZnodes() throws Exception {
        ZkLockManager a = node("A");
        ZkLockManager b = node("B");
        LockHandle kept = a.acquire(LockName.inode(1), EX, new Recorder("A", events, 0), WAIT);
        kept.unlock();

        for (int round = 0; round < 3; round++) {
            for (long ino = 100; ino < 150; ino++) {
                LockHandle onA = a.acquire(LockName.inode(ino), EX, new Recorder("A", events, 0), WAIT);
                onA.unlock();
                LockHandle onB = b.acquire(LockName.inode(ino), SH, new Recorder("B", events, 0), WAIT);
                onB.unlock();
                onB.release();
                onA.release();   // demoted to UN by B's request already: nothing of it is left in ZooKeeper
            }
        }

        assertThat(children(paths.locks())).as("the glocks with a holder").containsExactly("INODE-1");
        assertThat(children(paths.holders(LockName.inode(1)))).hasSize(1);
        LockHandle again = b.acquire(LockName.inode(100), EX, new Recorder("B", events, 0), WAIT);
        assertThat(children(paths.holders(LockName.inode(100)))).hasSize(1);
        again.unlock();
        again.release();
        assertThat(children(paths.locks())).containsExactly("INODE-1");
    }

    @Test
    void aReleaseLeavesTheZnodesOfAGlockARequestWaitsFor() throws Exception {
        ZkLockManager a = node("A");
        ZkLockManager b = node("B");
        LockName name = LockName.inode(7);
        LockHandle onA = a.acquire(name, EX, new Recorder("A", events, 0), WAIT);
        Background<LockHandle> waiter = Background.start("node-B",
                () -> b.acquire(name, EX, new Recorder("B", events, 0), WAIT));
        ZkTestServer.await("B is queued", () -> children(paths.queue(name)).size() == 1);

        onA.unlock();
        onA.release();
        LockHandle onB = waiter.join();

        assertThat(onB.mode()).isEqualTo(EX);
        assertThat(children(paths.holders(name))).hasSize(1).allMatch(entry -> entry.startsWith("B."));
        onB.unlock();
        onB.release();
        assertThat(children(paths.locks())).isEmpty();
    }

    private List<String> children(String path) {
        try {
            if (observer == null) {
                observer = server.client();
            }
            return observer.checkExists().forPath(path) == null ? List.of()
                    : observer.getChildren().forPath(path).stream().sorted().toList();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
