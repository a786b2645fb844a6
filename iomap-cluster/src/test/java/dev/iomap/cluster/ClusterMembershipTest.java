package dev.iomap.cluster;

import static dev.iomap.spi.lock.LockMode.EX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Journal slots, the self-fence, and the recovery of a dead node, on a real ZooKeeper server. */
class ClusterMembershipTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Duration MARGIN = Duration.ofMillis(400);
    private static final LockName INODE = LockName.inode(7);
    private static ZkTestServer server;

    private final UUID filesystem = UUID.randomUUID();
    private final ZkPaths paths = new ZkPaths(filesystem);
    private final List<String> events = Recorder.newEventList();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    static void startServer() throws Exception {
        server = new ZkTestServer();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @AfterEach
    void closeEverything() {
        try {
            for (AutoCloseable closeable : toClose.reversed()) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    // a dead node's manager or membership: its client is gone already
                }
            }
        } finally {
            server.closeClients();
        }
    }

    private JournalRecovery recorder(String survivor) {
        return (slot, dead) -> {
            events.add("replay " + slot + " " + dead + " by " + survivor);
            return 0;
        };
    }

    private ClusterMembership join(CuratorFramework client, int journals, String id) throws IOException {
        ClusterMembership membership = ClusterMembership.join(client, filesystem, journals, id, recorder(id), MARGIN);
        toClose.add(membership);
        return membership;
    }

    private ZkLockManager manager(CuratorFramework client, ClusterMembership membership) throws IOException {
        ZkLockManager manager = new ZkLockManager(client, filesystem, membership.incarnation(), membership.fence());
        toClose.add(manager);
        return manager;
    }

    @Test
    void mountsClaimFreeSlotsAndAreRefusedWhenAllAreTakenNamingTheHolders() throws Exception {
        ClusterMembership a = join(server.client(), 2, "A");
        ClusterMembership b = join(server.client(), 2, "B");
        CuratorFramework third = server.client();

        assertThat(a.slot()).isZero();
        assertThat(b.slot()).isEqualTo(1);
        assertThat(a.members()).isEqualTo(Map.of(0, "A", 1, "B"));
        assertThatThrownBy(() -> join(third, 2, "C")).isInstanceOfSatisfying(JournalSlotsTakenException.class,
                e -> {
                    assertThat(e.taken()).isEqualTo(Map.of(0, "A", 1, "B"));
                    assertThat(e).hasMessage("all 2 journal slots are taken {0=A, 1=B}: unmount a node first,"
                            + " or give the filesystem more journals");
                });

        a.close();
        ClusterMembership c = join(third, 2, "C");

        assertThat(c.slot()).isZero();
        assertThat(c.recoveredOnJoin()).isNull();
        assertThat(b.members()).isEqualTo(Map.of(0, "C", 1, "B"));
        assertThat(events).as("a clean unmount leaves nothing to replay").isEmpty();
        assertThatThrownBy(() -> a.fence().check()).isInstanceOf(NodeFencedException.class)
                .hasMessageContaining("left the cluster");
    }

    @Test
    void aSessionExpiryFencesTheNodeAndItsLockManager() throws Exception {
        CuratorFramework client = server.client();
        ClusterMembership a = join(client, 2, "A");
        ZkLockManager manager = manager(client, a);
        assertThat(a.fence().isFenced()).isFalse();

        client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();

        ZkTestServer.await("the fence trips", () -> a.fence().isFenced());
        assertThatThrownBy(() -> a.fence().check()).isInstanceOf(NodeFencedException.class)
                .isInstanceOf(FileSystemShutdownException.class).hasMessageContaining("fenced itself");
        assertThatThrownBy(() -> manager.acquire(INODE, EX, new Recorder("A", events, 0), WAIT))
                .isInstanceOf(NodeFencedException.class);
    }

    @Test
    void aConnectionLostAndRegainedWithinTheSessionFencesNothingAndAnAnswerRenewsTheLease() throws Exception {
        CuratorFramework client = server.client();
        ClusterMembership a = join(client, 2, "A");
        long session = client.getZookeeperClient().getZooKeeper().getSessionId();
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        client.getConnectionStateListenable().addListener((c, state) -> states.add(state));

        client.getZookeeperClient().getZooKeeper().getTestable().closeSocket();

        ZkTestServer.await("Curator reports the connection back", () -> states.contains(ConnectionState.RECONNECTED));
        long renewals = a.fence().renewals();
        ZkTestServer.await("an answer renews the lease", () -> a.fence().renewals() > renewals);
        assertThat(states).containsSubsequence(ConnectionState.SUSPENDED, ConnectionState.RECONNECTED);
        assertThat(client.getZookeeperClient().getZooKeeper().getSessionId()).as("same session").isEqualTo(session);
        assertThat(a.fence().isFenced()).as("SUSPENDED then RECONNECTED in the same session is no fence").isFalse();
        a.fence().check();
        long sessionNanos = TimeUnit.MILLISECONDS.toNanos(client.getZookeeperClient().getZooKeeper().getSessionTimeout());
        assertThat(a.fence().leaseRemainingNanos()).as("the lease ends a fifth of the session before the server may"
                + " expire it").isPositive().isLessThanOrEqualTo(sessionNanos - sessionNanos / Fence.MARGIN_DIVISOR);
    }

    @Test
    void aDeadNodesGlocksAreGrantedOnlyAfterItsJournalWasReplayed() throws Exception {
        CuratorFramework clientA = server.client();
        ClusterMembership a = join(clientA, 3, "A");
        ZkLockManager nodeA = manager(clientA, a);
        CuratorFramework clientB = server.client();
        ClusterMembership b = join(clientB, 3, "B");
        ZkLockManager nodeB = manager(clientB, b);
        LockHandle heldByA = nodeA.acquire(INODE, EX, new Recorder("A", events, 1), WAIT);
        Background<LockHandle> waiter = Background.start("node-B", () -> {
            LockHandle granted = nodeB.acquire(INODE, EX, new Recorder("B", events, 0), WAIT);
            events.add("B.granted " + granted.mode());
            return granted;
        });
        CuratorFramework observer = server.client();
        ZkTestServer.await("B asked A to demote",
                () -> isAskedToDemote(observer, "A.1.1=UN@"));

        long died = System.nanoTime();
        clientA.close();   // a power cut: no release, no unmount, the session ends now
        LockHandle granted = waiter.join();

        assertThat(events).containsExactly("replay 0 A.1 by B", "B.granted EX");
        assertThat(Duration.ofNanos(System.nanoTime() - died)).isGreaterThanOrEqualTo(MARGIN);
        // the marker goes (and the counter counts) after the glocks: a crash in between replays again
        ZkTestServer.await("the recovery finished", () -> b.recovery().recovered() == 1);
        assertThat(children(observer, paths.holders(INODE))).containsExactly("B.2.1=EX");
        assertThat(children(observer, paths.journals())).containsExactly("1");
        assertThat(nodeA.fence().isFenced()).isTrue();
        granted.unlock();
        heldByA.unlock();
    }

    @Test
    void aNodeWhoseSessionExpiresIsFencedAndRecoveredThoughItsClientLivesOn() throws Exception {
        CuratorFramework clientA = server.client(Duration.ofSeconds(2));
        ClusterMembership a = join(clientA, 3, "A");
        ZkLockManager nodeA = manager(clientA, a);
        CuratorFramework clientB = server.client();
        ClusterMembership b = join(clientB, 3, "B");
        ZkLockManager nodeB = manager(clientB, b);
        LockHandle heldByA = nodeA.acquire(INODE, EX, new Recorder("A", events, 1), WAIT);
        Background<LockHandle> waiter = Background.start("node-B", () -> {
            LockHandle granted = nodeB.acquire(INODE, EX, new Recorder("B", events, 0), WAIT);
            events.add("B.granted " + granted.mode());
            return granted;
        });
        CuratorFramework observer = server.client();
        ZkTestServer.await("B asked A to demote",
                () -> isAskedToDemote(observer, "A.1.1=UN@"));

        // A partition: A's client sees its session expire and opens a new one; the server expires the
        // old one after its timeout, which deletes A's membership
        clientA.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
        ZkTestServer.await("A fenced itself", () -> a.fence().isFenced());
        LockHandle granted = waiter.join();

        assertThat(events).containsExactly("replay 0 A.1 by B", "B.granted EX");
        assertThatThrownBy(() -> heldByA.lock(EX, WAIT)).isInstanceOf(NodeFencedException.class);
        assertThatThrownBy(() -> nodeA.acquire(LockName.inode(8), EX, new Recorder("A", events, 0), WAIT))
                .isInstanceOf(NodeFencedException.class);
        ZkTestServer.await("the recovery finished", () -> b.recovery().recovered() == 1);
        assertThat(children(observer, paths.holders(INODE))).containsExactly("B.2.1=EX");
        granted.unlock();
        heldByA.unlock();
    }

    @Test
    void aMountThatClaimsADeadNodesSlotReplaysItsJournalFirst() throws Exception {
        CuratorFramework clientA = server.client();
        ClusterMembership a = join(clientA, 1, "A");
        ZkLockManager nodeA = manager(clientA, a);
        nodeA.acquire(INODE, EX, new Recorder("A", events, 1), WAIT).unlock();
        clientA.close();

        CuratorFramework clientB = server.client();
        ClusterMembership b = join(clientB, 1, "B");
        ZkLockManager nodeB = manager(clientB, b);
        long before = nodeB.demoteRequestsSent();
        LockHandle granted = nodeB.acquire(INODE, EX, new Recorder("B", events, 0), WAIT);

        assertThat(b.slot()).isZero();
        assertThat(b.recoveredOnJoin()).isEqualTo(new Incarnation("A", 1));
        assertThat(events).containsExactly("replay 0 A.1 by B");
        assertThat(nodeB.demoteRequestsSent()).as("A's glock was gone before B asked").isEqualTo(before);
        granted.unlock();
    }

    @Test
    void aFailedReplayKeepsTheGlocksAndIsTriedAgain() throws Exception {
        CuratorFramework clientA = server.client();
        ClusterMembership a = join(clientA, 2, "A");
        ZkLockManager nodeA = manager(clientA, a);
        nodeA.acquire(INODE, EX, new Recorder("A", events, 1), WAIT).unlock();
        AtomicInteger attempts = new AtomicInteger();
        CuratorFramework clientB = server.client();
        ClusterMembership b = ClusterMembership.join(clientB, filesystem, 2, "B", (slot, dead) -> {
            if (attempts.incrementAndGet() == 1) {
                events.add("replay failed");
                throw new IOException("journal block unreadable");
            }
            events.add("replay " + slot + " " + dead);
            return 0;
        }, MARGIN);
        toClose.add(b);
        ZkLockManager nodeB = manager(clientB, b);

        clientA.close();
        LockHandle granted = nodeB.acquire(INODE, EX, new Recorder("B", events, 0), WAIT);
        events.add("B.granted " + granted.mode());

        assertThat(events).containsExactly("replay failed", "replay 0 A.1", "B.granted EX");
        ZkTestServer.await("the recovery finished", () -> b.recovery().recovered() == 1);
        assertThat(b.recovery().failures()).isEqualTo(1);
        granted.unlock();
    }

    @Test
    void aDeadNodesHostIsFencedBeforeItsJournalIsReplayedAndAFailedFencingIsTriedAgain() throws Exception {
        CuratorFramework clientA = server.client();
        ClusterMembership a = join(clientA, 2, "A");
        ZkLockManager nodeA = manager(clientA, a);
        nodeA.acquire(INODE, EX, new Recorder("A", events, 1), WAIT).unlock();
        AtomicInteger attempts = new AtomicInteger();
        FenceAgent agent = dead -> {
            if (attempts.incrementAndGet() == 1) {
                events.add("fencing " + dead + " failed");
                throw new IOException("the switch did not answer");
            }
            events.add("fenced " + dead);
        };
        CuratorFramework clientB = server.client();
        ClusterMembership b = ClusterMembership.join(clientB, filesystem, 2, "B", recorder("B"), MARGIN, agent);
        toClose.add(b);
        ZkLockManager nodeB = manager(clientB, b);

        clientA.close();
        LockHandle granted = nodeB.acquire(INODE, EX, new Recorder("B", events, 0), WAIT);
        events.add("B.granted " + granted.mode());

        assertThat(events).containsExactly("fencing A.1 failed", "fenced A.1", "replay 0 A.1 by B", "B.granted EX");
        ZkTestServer.await("the recovery finished", () -> b.recovery().recovered() == 1);
        assertThat(b.recovery().failures()).isEqualTo(1);
        assertThat(b.recovery().counters()).containsEntry("recovery.fenced", 1L);
        granted.unlock();
    }

    @Test
    void aNodeIdThatIsLiveAgainIsNotFencedWhenItsDeadIncarnationIsRecovered() throws Exception {
        CuratorFramework clientA = server.client();
        join(clientA, 1, "A");
        clientA.close();
        CuratorFramework clientA2 = server.client();
        FenceAgent agent = dead -> events.add("fenced " + dead);
        ClusterMembership a2 = ClusterMembership.join(clientA2, filesystem, 1, "A", recorder("A.2"), MARGIN, agent);
        toClose.add(a2);

        assertThat(a2.recoveredOnJoin()).isEqualTo(new Incarnation("A", 1));
        assertThat(events).as("A.2 replays A.1's journal without fencing its own host")
                .containsExactly("replay 0 A.1 by A.2");
        assertThat(a2.recovery().counters()).containsEntry("recovery.fenced", 0L);
    }

    private boolean isAskedToDemote(CuratorFramework observer, String prefix) {
        List<String> requests = children(observer, paths.demoteDir(new Incarnation("A", 1)));
        return requests.size() == 1 && requests.get(0).startsWith(prefix);
    }

    private static List<String> children(CuratorFramework client, String path) {
        try {
            return client.getChildren().forPath(path).stream().sorted().toList();
        } catch (Exception e) {
            return List.of("<" + e + ">");
        }
    }
}
