package dev.iomap.cluster;

import static dev.iomap.spi.lock.LockMode.EX;
import static dev.iomap.spi.lock.LockMode.UN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 items 1, 10 and 11: a node id names a node, an incarnation names one mount of it. Every
 * holder entry, journal marker and recovery names an incarnation, so a node that comes back with its
 * id recovers its dead incarnation's journal and glocks and nobody else's; an id a live incarnation
 * holds is refused, touching nothing; holder entries of dead incarnations that no journal protects
 * are cleaned. On a real ZooKeeper server.
 */
class ClusterIncarnationTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Duration MARGIN = Duration.ofMillis(400);
    /** A recovery margin no test waits out: that node recovers nobody while the test looks. */
    private static final Duration NEVER = Duration.ofMinutes(10);
    private static final LockName INODE = LockName.inode(7);
    private static final LockName OTHER = LockName.inode(8);
    private static ZkTestServer server;

    private final UUID filesystem = UUID.randomUUID();
    private final ZkPaths paths = new ZkPaths(filesystem);
    private final List<String> events = Recorder.newEventList();
    private final List<AutoCloseable> toClose = new ArrayList<>();
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

    private ClusterMembership join(CuratorFramework client, int journals, String id, Duration margin)
            throws IOException {
        return join(client, journals, id, recorder(id), margin);
    }

    private ClusterMembership join(CuratorFramework client, int journals, String id, JournalRecovery replay,
            Duration margin) throws IOException {
        ClusterMembership membership = ClusterMembership.join(client, filesystem, journals, id, replay, margin);
        toClose.add(membership);
        return membership;
    }

    private ZkLockManager manager(CuratorFramework client, ClusterMembership membership) throws IOException {
        ZkLockManager manager = new ZkLockManager(client, filesystem, membership.incarnation(), membership.fence());
        toClose.add(manager);
        return manager;
    }

    /**
     * The probe of item 1: the node crashed and mounts again with its id on the same (only) slot.
     * Its marker named the id, which the recovery took for its own, so nothing was replayed and the
     * join failed creating the marker ({@code mark journal 0 in use: NodeExists}): the id could never
     * mount again. Now the marker names the dead incarnation, whose journal and glocks the new one
     * recovers before it uses the slot.
     */
    @Test
    void aNodeThatComesBackWithItsIdReplaysItsDeadIncarnationsJournalFirst() throws Exception {
        CuratorFramework first = server.client();
        ClusterMembership a1 = join(first, 1, "A", MARGIN);
        manager(first, a1).acquire(INODE, EX, new Recorder("A1", events, 1), WAIT).unlock();
        first.close();   // a power cut: the session ends, the holder entry and the marker stay

        CuratorFramework second = server.client();
        ClusterMembership a2 = join(second, 1, "A", MARGIN);
        ZkLockManager nodeA2 = manager(second, a2);
        LockHandle granted = nodeA2.acquire(INODE, EX, new Recorder("A2", events, 0), WAIT);

        assertThat(a2.slot()).isZero();
        assertThat(a1.incarnation()).isEqualTo(new Incarnation("A", 1));
        assertThat(a2.incarnation()).isEqualTo(new Incarnation("A", 2));
        assertThat(a2.recoveredOnJoin()).isEqualTo(a1.incarnation());
        assertThat(events).containsExactly("replay 0 A.1 by A");
        assertThat(nodeA2.demoteRequestsSent()).as("the dead incarnation's glock was gone before the new one asked")
                .isZero();
        assertThat(children(paths.holders(INODE))).containsExactly("A.2.1=EX");
        assertThat(data(paths.journal(0))).isEqualTo("A.2");
        granted.unlock();
    }

    /**
     * Item 1, another slot: the dead incarnation's slot was not the lowest free one when its id came
     * back, so the new incarnation took another, and its recovery skipped the old journal as its own:
     * it was never replayed. B, which would have recovered it, left first.
     */
    @Test
    void aDeadIncarnationsJournalOnAnotherSlotIsRecoveredByTheNextIncarnation() throws Exception {
        ClusterMembership b = join(server.client(), 2, "B", NEVER);
        CuratorFramework first = server.client();
        ClusterMembership a1 = join(first, 2, "A", MARGIN);
        manager(first, a1).acquire(INODE, EX, new Recorder("A1", events, 1), WAIT).unlock();
        first.close();
        b.close();

        CuratorFramework second = server.client();
        ClusterMembership a2 = join(second, 2, "A", MARGIN);
        ZkTestServer.await("A's dead incarnation's journal is recovered", () -> a2.recovery().recovered() == 1);

        assertThat(b.slot()).isZero();
        assertThat(a1.slot()).isEqualTo(1);
        assertThat(a2.slot()).isZero();
        assertThat(a1.incarnation()).isEqualTo(new Incarnation("A", 2));   // numbers count every join
        assertThat(events).containsExactly("replay 1 A.2 by A");
        assertThat(exists(paths.journal(1))).as("the marker goes with the recovery").isFalse();
        assertThat(exists(paths.holders(INODE))).as("the dead incarnation's glock went with it").isFalse();
        LockHandle granted = manager(second, a2).acquire(INODE, EX, new Recorder("A2", events, 0), WAIT);
        granted.unlock();
    }

    /**
     * Item 1, the split brain: a third node recovered the dead incarnation of A by node id, and so
     * deleted the holder entries of A's live incarnation too: B was then granted EX on a glock A's new
     * incarnation holds in EX, which went on using its cached EX without asking. B's replay waits until
     * the new incarnation holds its glock, so that the recovery runs when both incarnations have entries.
     */
    @Test
    void recoveringADeadIncarnationLeavesTheGlocksOfTheLiveIncarnationOfItsId() throws Exception {
        ClusterMembership x = join(server.client(), 3, "X", NEVER);
        CuratorFramework first = server.client();
        ClusterMembership a1 = join(first, 3, "A", MARGIN);
        CountDownLatch a2Holds = new CountDownLatch(1);
        CuratorFramework clientB = server.client();
        ClusterMembership b = join(clientB, 3, "B", (slot, dead) -> {
            awaitOrFail(a2Holds);
            events.add("replay " + slot + " " + dead + " by B");
            return 0;
        }, MARGIN);
        ZkLockManager nodeB = manager(clientB, b);
        manager(first, a1).acquire(INODE, EX, new Recorder("A1", events, 1), WAIT).unlock();
        first.close();
        x.close();
        CuratorFramework second = server.client();
        ClusterMembership a2 = join(second, 3, "A", NEVER);
        LockHandle onA2 = manager(second, a2).acquire(OTHER, EX, new Recorder("A2", events, 3), WAIT);
        onA2.unlock();
        a2Holds.countDown();
        ZkTestServer.await("B recovered A's dead incarnation", () -> b.recovery().recovered() == 1);

        LockHandle onB = nodeB.acquire(OTHER, EX, new Recorder("B", events, 0), WAIT);
        events.add("B.granted " + onB.mode());

        assertThat(a2.slot()).isZero();
        assertThat(a1.incarnation()).isEqualTo(new Incarnation("A", 2));
        assertThat(events).containsExactly("replay 1 A.2 by B", "A2.sync EX>UN", "A2.invalidate EX>UN",
                "B.granted EX");
        assertThat(onA2.mode()).as("A's new incarnation was asked, and gave its glock up").isEqualTo(UN);
        assertThat(onA2.lockIfCached(EX)).isFalse();
        assertThat(children(paths.holders(OTHER))).containsExactly("B.3.1=EX");
        assertThat(exists(paths.demoteDir(a2.incarnation()))).as("the new incarnation's demote directory").isTrue();
        onB.unlock();
    }

    /**
     * Item 10: the same id mounted twice. Either both mounts ran (holder entries {@code A.1=EX} and
     * {@code A.1=SH} of one glock at once), or the second failed and its clean-up deleted the live
     * node's demote directory (a third node then waited for demotions nobody was told of). Now the
     * second is refused in one line, and ZooKeeper holds exactly what it held before.
     */
    @Test
    void aNodeIdThatALiveIncarnationHoldsIsRefusedInOneLineTouchingNothing() throws Exception {
        CuratorFramework first = server.client();
        ClusterContext a = new ZkClusterJoin(first, "A", MARGIN).join(filesystem.toString(), 2, slot -> 0);
        toClose.add(a);
        a.lockManager().acquire(INODE, EX, new Recorder("A", events, 0), WAIT).unlock();
        TreeMap<String, String> before = tree("/iomap4j");

        CuratorFramework second = server.client();
        assertThatThrownBy(() -> new ZkClusterJoin(second, "A", MARGIN).join(filesystem.toString(), 2, slot -> 0))
                .isInstanceOf(NodeIdInUseException.class)
                .hasMessage("node id A is in use by a live mount of this filesystem (incarnation A.1, since "
                        + sinceOf("A") + "): give this mount another node id; if that mount died, its"
                        + " ZooKeeper session ends within its session timeout, and the id is free again");

        assertThat(tree("/iomap4j")).as("everything in ZooKeeper, path and data").isEqualTo(before);
        LockHandle onA = a.lockManager().acquire(OTHER, EX, new Recorder("A", events, 0), WAIT);
        onA.unlock();
        assertThat(events).isEmpty();
    }

    /**
     * Item 11: a holder entry of a dead incarnation that no journal marker protects (its journal was
     * recovered, or it left without releasing it; the issue's {@code RGRP-0/holders/b.7=EX} without a
     * {@code demote/b}), which no demotion will ever answer. A request that finds no demote
     * directory for a holder checks whether it is stale and deletes it, instead of waiting for the glock
     * timeout.
     */
    @Test
    void aStaleHolderEntryWithoutDemoteDirectoryIsDeletedByTheNextRequest() throws Exception {
        createStaleEntry(INODE, "b.3.7=EX");
        CuratorFramework client = server.client();
        ClusterMembership a = join(client, 2, "A", MARGIN);

        LockHandle granted = manager(client, a).acquire(INODE, EX, new Recorder("A", events, 0),
                Duration.ofSeconds(5));

        assertThat(children(paths.holders(INODE))).containsExactly("A.1.1=EX");
        granted.unlock();
    }

    /**
     * Item 11, the stale entry's incarnation left its demote directory too (a fenced unmount leaves
     * both): a request's demote request lands there and nobody answers it. The node that joins finds
     * the dead incarnation (a demote directory, no live mount, no journal marker) and deletes its
     * entries and directory.
     */
    @Test
    void aStaleIncarnationsEntriesAndDemoteDirectoryAreDeletedByTheNodeThatJoins() throws Exception {
        createStaleEntry(INODE, "b.3.7=EX");
        createStaleEntry(OTHER, "b.3.9=SH");
        String staleDemotes = paths.root() + "/demote/b.3";
        observer().create().creatingParentsIfNeeded().forPath(staleDemotes);
        CuratorFramework client = server.client();
        ClusterMembership a = join(client, 2, "A", MARGIN);

        LockHandle granted = manager(client, a).acquire(INODE, EX, new Recorder("A", events, 0),
                Duration.ofSeconds(5));

        assertThat(children(paths.holders(INODE))).containsExactly("A.1.1=EX");
        assertThat(exists(paths.lock(OTHER))).as("the idle glock's znodes went with the entry").isFalse();
        assertThat(exists(staleDemotes)).isFalse();
        granted.unlock();
    }

    private static void awaitOrFail(CountDownLatch latch) throws IOException {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IOException("A's new incarnation never took its glock");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted");
        }
    }

    /** Creates a glock's znodes with one holder entry, as a dead node left them. */
    private void createStaleEntry(LockName name, String entry) throws Exception {
        observer().create().creatingParentsIfNeeded().forPath(paths.queue(name));
        observer().create().creatingParentsIfNeeded().forPath(paths.holders(name) + "/" + entry);
    }

    /** @return when node {@code id}'s live incarnation joined, as the refusal prints it */
    private String sinceOf(String id) throws Exception {
        var stat = observer().checkExists().forPath(paths.node(id));
        return java.time.Instant.ofEpochMilli(stat.getCtime()).toString();
    }

    private CuratorFramework observer() throws InterruptedException {
        if (observer == null) {
            observer = server.client();
        }
        return observer;
    }

    /** @return every znode under {@code root} (itself included) and its data */
    private TreeMap<String, String> tree(String root) throws Exception {
        TreeMap<String, String> tree = new TreeMap<>();
        walk(root, tree);
        return tree;
    }

    private void walk(String path, TreeMap<String, String> tree) throws Exception {
        byte[] data = observer().getData().forPath(path);
        tree.put(path, data == null ? "" : new String(data, java.nio.charset.StandardCharsets.UTF_8));
        for (String child : observer().getChildren().forPath(path)) {
            walk(path + "/" + child, tree);
        }
    }

    private List<String> children(String path) throws Exception {
        return observer().getChildren().forPath(path).stream().sorted().toList();
    }

    private boolean exists(String path) throws Exception {
        return observer().checkExists().forPath(path) != null;
    }

    private String data(String path) throws Exception {
        return new String(observer().getData().forPath(path), java.nio.charset.StandardCharsets.UTF_8);
    }
}
