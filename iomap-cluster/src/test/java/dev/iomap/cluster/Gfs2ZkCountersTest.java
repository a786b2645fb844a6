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
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The glock counters of gfs2-like ZooKeeper nodes, exactly, for small deterministic scenarios: a node that
 * keeps using its own file pays ZooKeeper nothing after warm-up, and a handoff of one file between two
 * nodes costs one grant, one demote request and one demotion, and a fixed number of requests.
 */
class Gfs2ZkCountersTest {
    private static final int BLOCK = 4096;
    private static final int SIZE = 2 * BLOCK + 100;
    /**
     * ZooKeeper requests of the node that takes an EX glock another node holds, in the steady state: its
     * queue entry, the listings of queue and holders, the demote request, the wait's listings and the
     * grant transaction (the protocol in the module README); measured, and the same every time.
     */
    private static final long WRITER_REQUESTS = 9;
    /** ZooKeeper requests of the holder it demotes: its demote directory scan, the lowering transaction, a rescan. */
    private static final long HOLDER_REQUESTS = 3;

    private ZkTestServer zk;
    private RamBlockDevice device;
    private IomapFileSystem a;
    private IomapFileSystem b;

    @BeforeEach
    void start() throws Exception {
        zk = new ZkTestServer();
        device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "counters", Map.of("journals", "3")));
        a = node("A");
        b = node("B");
    }

    private IomapFileSystem node(String id) throws Exception {
        return CoreRuntime.mount(new Gfs2LikeAdapter(new ZkClusterJoin(zk.client(), id, Duration.ofMillis(200))),
                device, new MountOptions(PageCacheOptions.defaults(), false));
    }

    @AfterEach
    void stop() throws IOException {
        try {
            if (b != null) {
                b.close();
            }
            if (a != null) {
                a.close();
            }
        } finally {
            zk.close();
        }
    }

    /**
     * Waits until neither node's counters change for 300 ms: a holder's demotion is counted, and its
     * demote directory scanned again, on its demoter thread, after the writer was granted.
     */
    private void settle() throws Exception {
        Map<String, Long> last = Map.of();
        long stableSince = System.nanoTime();
        long end = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < end) {
            Map<String, Long> now = new HashMap<>(counters(a));
            counters(b).forEach((k, v) -> now.put("B." + k, v));
            if (!now.equals(last)) {
                last = now;
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince > 300_000_000L) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the counters did not settle in 20 s");
    }

    private static Map<String, Long> counters(IomapFileSystem fs) throws IOException {
        return new HashMap<>(fs.stats().adapterCounters());
    }

    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new HashMap<>();
        for (String key : new String[] {"glock.zk.requests", "glock.grants", "glock.cachedHolds", "glock.demotions",
            "glock.zk.demoteRequestsSent"}) {
            d.put(key, after.get(key) - before.get(key));
        }
        return d;
    }

    @Test
    void aNodeReReadingItsOwnFileSendsNoRequestAfterWarmUp() throws Exception {
        try (IomapFile file = a.create("/mine")) {
            Gfs2ZkFenceTest.write(file, 0, Gfs2ZkFenceTest.pattern(1, SIZE));
            file.fsync();
        }
        Gfs2ZkFenceTest.readAll(a, "/mine");
        Map<String, Long> before = counters(a);
        for (int i = 0; i < 100; i++) {
            Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(a, "/mine"), Gfs2ZkFenceTest.pattern(1, SIZE),
                    "read " + i);
        }
        Map<String, Long> d = delta(before, counters(a));
        assertThat(d.get("glock.cachedHolds")).as("uses served from the cached modes: 10 per open (the iopen glock,"
                + " the link count and the inode flags included), stat and read").isEqualTo(1000L);
        assertThat(d.get("glock.zk.requests")).as("ZooKeeper requests").isZero();
        assertThat(d.get("glock.grants")).as("grants").isZero();
        assertThat(d.get("glock.demotions")).as("demotions").isZero();
    }

    @Test
    void aHandoffBetweenTwoNodesCostsOneGrantOneDemoteRequestAndOneDemotion() throws Exception {
        try (IomapFile file = a.create("/shared")) {
            Gfs2ZkFenceTest.write(file, 0, Gfs2ZkFenceTest.pattern(1, SIZE));
            file.fsync();
        }
        IomapFileSystem[] nodes = {a, b};
        try (IomapFile fa = a.open("/shared"); IomapFile fb = b.open("/shared")) {
            IomapFile[] files = {fa, fb};
            for (int round = 0; round < 6; round++) {
                int writer = round % 2;
                settle();
                Map<String, Long> writerBefore = counters(nodes[writer]);
                Map<String, Long> holderBefore = counters(nodes[1 - writer]);
                Gfs2ZkFenceTest.write(files[writer], 0, Gfs2ZkFenceTest.pattern(round + 2, BLOCK));
                settle();
                Map<String, Long> w = delta(writerBefore, counters(nodes[writer]));
                Map<String, Long> h = delta(holderBefore, counters(nodes[1 - writer]));
                String what = "round " + round + ", " + (writer == 0 ? "A" : "B") + " writes";
                // round 1: B's first write also takes its home resource group's glock, which A (which
                // created the file, taking every group) held: two handoffs
                long handoffs = round == 1 ? 2 : 1;
                assertThat(w.get("glock.grants")).as(what + ": the writer's grants").isEqualTo(handoffs);
                assertThat(w.get("glock.zk.demoteRequestsSent")).as(what + ": demote requests")
                        .isEqualTo(handoffs);
                assertThat(w.get("glock.demotions")).as(what + ": the writer's demotions").isZero();
                assertThat(h.get("glock.demotions")).as(what + ": the holder's demotions").isEqualTo(handoffs);
                assertThat(h.get("glock.grants")).as(what + ": the holder's grants").isZero();
                if (round >= 2) {
                    assertThat(w.get("glock.zk.requests")).as(what + ": the writer's requests")
                            .isEqualTo(WRITER_REQUESTS);
                    assertThat(h.get("glock.zk.requests")).as(what + ": the holder's requests")
                            .isEqualTo(HOLDER_REQUESTS);
                }
            }
        }
    }
}
