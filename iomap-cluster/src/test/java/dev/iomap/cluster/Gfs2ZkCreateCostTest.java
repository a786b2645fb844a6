package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What one create costs a gfs2-like ZooKeeper node alone (issue 40, cluster creates): 100 files created
 * and closed in one directory after a warm-up create, counted exactly. ZooKeeper writes are the server's
 * committed transactions (the zxid's advance between two probe znodes: each costs a quorum round and a
 * log fsync on the servers), requests are the node's round trips, glock grants are the modes the node had
 * to ask ZooKeeper for; the device counts are what the node's mount sent to the shared device.
 */
class Gfs2ZkCreateCostTest {
    private static final int BLOCK = 4096;
    private static final int FILES = 100;

    private ZkTestServer zk;
    private RamBlockDevice shared;
    private CuratorFramework probe;
    private int probes;
    private final java.util.List<IomapFileSystem> mounts = new java.util.ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        zk = new ZkTestServer();
        probe = zk.client();
        shared = new RamBlockDevice(BLOCK, 64L << 20);
        new Gfs2LikeAdapter().format(shared, new FormatOptions(BLOCK, "create-cost", Map.of("journals", "3")));
    }

    private IomapFileSystem node(String id, NodeDevice device) throws Exception {
        IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(new ZkClusterJoin(zk.client(), id,
                Duration.ofMillis(200))), device, new MountOptions(PageCacheOptions.defaults(), false));
        mounts.add(fs);
        return fs;
    }

    @AfterEach
    void stop() throws IOException {
        try {
            for (int i = mounts.size() - 1; i >= 0; i--) {
                mounts.get(i).close();
            }
        } finally {
            zk.close();
        }
    }

    /** @return the zxid of a new probe znode: every ZooKeeper write before it has a smaller one */
    private long zxid() throws Exception {
        Stat stat = new Stat();
        probe.create().storingStatIn(stat).withMode(CreateMode.EPHEMERAL).forPath("/create-cost-probe-" + probes++);
        return stat.getCzxid();
    }

    /** What a node and the server counted at one moment. */
    private record Snapshot(long zxid, Map<String, Long> counters, long reads, long writes, long flushes) {
        Snapshot {
            counters = Map.copyOf(counters);
        }

        long counter(String name, Snapshot before) {
            return counters.get(name) - before.counters.get(name);
        }
    }

    private Snapshot snapshot(IomapFileSystem fs, NodeDevice device) throws Exception {
        return new Snapshot(zxid(), new HashMap<>(fs.stats().adapterCounters()), device.reads(), device.writes(),
                device.flushes());
    }

    @Test
    void aCreateOnOneNodeCostsOneZooKeeperWriteAndNothingOnTheDevice() throws Exception {
        NodeDevice device = new NodeDevice(shared);
        IomapFileSystem a = node("A", device);
        a.mkdir("/d");
        a.create("/d/warm-up").close();
        Snapshot before = snapshot(a, device);
        long start = System.nanoTime();
        for (int i = 0; i < FILES; i++) {
            a.create("/d/f" + i).close();
        }
        long nanos = System.nanoTime() - start;
        Snapshot after = snapshot(a, device);
        long zkWrites = after.zxid() - before.zxid() - 1;   // the second probe is one
        long requests = after.counter("glock.zk.requests", before);
        long grants = after.counter("glock.grants", before);
        long cached = after.counter("glock.cachedHolds", before);
        long commits = after.counter("journal.commits", before);
        long checkpoints = after.counter("journal.checkpoints", before);
        System.out.printf(Locale.ROOT, "create cost per create over %d creates: %.2f ZooKeeper writes, %.2f requests,"
                + " %.2f glock grants, %.2f cached glock uses, %.2f journal commits, %.2f checkpoints,"
                + " %.2f device reads, %.2f writes, %.2f flushes; %.2f ms per create%n", FILES,
                (double) zkWrites / FILES, (double) requests / FILES, (double) grants / FILES, (double) cached / FILES,
                (double) commits / FILES, (double) checkpoints / FILES,
                (double) (after.reads() - before.reads()) / FILES,
                (double) (after.writes() - before.writes()) / FILES,
                (double) (after.flushes() - before.flushes()) / FILES, nanos / 1e6 / FILES);
        // One transaction registers each new inode's two glocks (a glock nobody uses is granted with the
        // creation of its znodes, both at once); the directory's and the resource group's glocks stay cached.
        assertThat(zkWrites).as("ZooKeeper writes").isEqualTo(FILES);
        assertThat(requests).as("ZooKeeper requests").isEqualTo(FILES);
        assertThat(grants).as("glock grants: the new inode's glock and iopen glock").isEqualTo(2L * FILES);
        // Nothing reaches the device: the creates join the running transaction, which commits when full,
        // at fsync or for a demotion (none here).
        assertThat(commits).as("journal commits").isZero();
        assertThat(after.writes() - before.writes()).as("device writes").isZero();
        assertThat(after.flushes() - before.flushes()).as("device flushes").isZero();
    }

    /**
     * A file created on one node is that node's in ZooKeeper before any other node can find it (the
     * transaction that registered its two glocks: the inode's in EX, the iopen glock in SH); another node
     * that opens it demotes the creator and reads what the creator wrote without fsync, and the creator
     * then reads the other node's append.
     */
    @Test
    void aFileCreatedOnOneNodeIsItsInZooKeeperAndAnotherNodeReadsAndExtendsIt() throws Exception {
        IomapFileSystem a = node("A", new NodeDevice(shared));
        IomapFileSystem b = node("B", new NodeDevice(shared));
        a.mkdir("/d");
        byte[] first = Gfs2ZkFenceTest.pattern(3, 5000);
        try (IomapFile file = a.create("/d/new")) {
            Gfs2ZkFenceTest.write(file, 0, first);
        }
        long ino = a.stat("/d/new").ino();
        String locks = "/iomap4j/" + a.uuid().orElseThrow() + "/locks/";
        assertThat(probe.getChildren().forPath(locks + "INODE-" + ino + "/holders")).as("the inode glock's holders")
                .singleElement().satisfies(entry -> assertThat(entry).startsWith("A.").endsWith("=EX"));
        assertThat(probe.getChildren().forPath(locks + "IOPEN-" + ino + "/holders")).as("the iopen glock's holders")
                .singleElement().satisfies(entry -> assertThat(entry).startsWith("A.").endsWith("=SH"));

        Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(b, "/d/new"), first, "B reads A's new file");
        byte[] second = Gfs2ZkFenceTest.pattern(4, 300);
        try (IomapFile file = b.open("/d/new")) {
            Gfs2ZkFenceTest.write(file, first.length, second);
        }
        byte[] both = java.util.Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(a, "/d/new"), both, "A reads B's append");
        assertThat(b.stat("/d/new").ino()).isEqualTo(ino);
    }
}
