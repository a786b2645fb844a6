package dev.iomap.adapter.support.lock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Nodes with a write-back cache per lock, over one "device" of counters: every node's threads take one
 * or two locks (in the lock order) in random modes and read or increment the counters through their
 * node's cache. Coherence holds only if every demotion synced and invalidated before the grant: a
 * reader under SH sees the true value, a writer under EX never loses an increment, and no wait hangs
 * (a lost wakeup would hit the 60 s lock timeout). Seeded: -Diomap.test.seed; op count per thread:
 * -Diomap.test.ops (default 300).
 */
class InProcessLockStressTest {
    private static final int NODES = 3;
    private static final int THREADS_PER_NODE = 2;
    private static final int NAMES = 3;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** The shared device: one counter per name; written only by a sync. */
    private final long[] device = new long[NAMES];
    /** Every increment done under EX, per name: what a coherent reader must see. */
    private final AtomicLong[] truth = new AtomicLong[NAMES];
    private final List<NodeCache> caches = new ArrayList<>();

    /** One node's cache of the counters, dropped by invalidate and written back by sync. */
    private final class NodeCache implements DemoteCallbacks {
        private final Map<Integer, long[]> cached = new HashMap<>();   // name -> {value, dirty}

        synchronized long read(int name) {
            long[] entry = cached.computeIfAbsent(name, key -> new long[] {readDevice(key), 0});
            return entry[0];
        }

        synchronized void increment(int name) {
            long[] entry = cached.computeIfAbsent(name, key -> new long[] {readDevice(key), 0});
            entry[0]++;
            entry[1] = 1;
        }

        @Override
        public synchronized void sync(LockName name, LockMode from, LockMode to) {
            long[] entry = cached.get((int) name.number());
            if (entry != null && entry[1] == 1) {
                writeDevice((int) name.number(), entry[0]);
                entry[1] = 0;
            }
        }

        @Override
        public synchronized long invalidate(LockName name, LockMode from, LockMode to) throws IOException {
            long[] entry = cached.remove((int) name.number());
            if (entry != null && entry[1] == 1) {
                throw new IOException("dirty entry of " + name + " dropped");
            }
            return entry == null ? 0 : 1;
        }
    }

    private synchronized long readDevice(int name) {
        return device[name];
    }

    private synchronized void writeDevice(int name, long value) {
        device[name] = value;
    }

    @Test
    void seededContentionKeepsEveryNodesCacheCoherentAndNeverHangs() throws Exception {
        long seed = Long.getLong("iomap.test.seed", 0);
        int ops = Integer.getInteger("iomap.test.ops", 300);
        for (int i = 0; i < NAMES; i++) {
            truth[i] = new AtomicLong();
        }
        InProcessLockSpace space = new InProcessLockSpace();
        List<InProcessLockManager> managers = new ArrayList<>();
        List<LockHandle[]> handles = new ArrayList<>();
        for (int node = 0; node < NODES; node++) {
            InProcessLockManager manager = new InProcessLockManager(space, "node" + node, true);
            NodeCache cache = new NodeCache();
            LockHandle[] byName = new LockHandle[NAMES];
            for (int name = 0; name < NAMES; name++) {
                byName[name] = manager.acquire(LockName.inode(name), LockMode.SH, cache, TIMEOUT);
                byName[name].unlock();
            }
            managers.add(manager);
            handles.add(byName);
            caches.add(cache);
        }
        List<CompletableFuture<Long>> workers = new ArrayList<>();
        for (int node = 0; node < NODES; node++) {
            for (int t = 0; t < THREADS_PER_NODE; t++) {
                int nodeIndex = node;
                Random random = new Random(seed * 31 + node * 7L + t);
                workers.add(CompletableFuture.supplyAsync(() -> run(random, ops, handles.get(nodeIndex),
                        caches.get(nodeIndex)), command -> Thread.ofPlatform().name("stress-" + nodeIndex).start(command)));
            }
        }
        long writes = 0;
        for (CompletableFuture<Long> worker : workers) {
            writes += worker.get(10, TimeUnit.MINUTES);
        }
        for (InProcessLockManager manager : managers) {
            manager.close();
        }

        long total = 0;
        for (int name = 0; name < NAMES; name++) {
            assertThat(device[name]).as("seed " + seed + ": device value of inode " + name)
                    .isEqualTo(truth[name].get());
            total += device[name];
        }
        assertThat(total).as("seed " + seed + ": every increment reached the device").isEqualTo(writes);
        assertThat(space.activeNames()).isZero();
        long demotions = managers.stream().mapToLong(m -> m.stats().demotions()).sum();
        assertThat(demotions).as("seed " + seed + ": the nodes really contended").isPositive();
    }

    private long run(Random random, int ops, LockHandle[] byName, NodeCache cache) {
        long writes = 0;
        try {
            for (int op = 0; op < ops; op++) {
                int first = random.nextInt(NAMES);
                int second = random.nextInt(NAMES);
                int low = Math.min(first, second);
                int high = Math.max(first, second);
                LockMode lowMode = pick(random);
                LockMode highMode = pick(random);
                byName[low].lock(lowMode, TIMEOUT);
                try {
                    writes += use(cache, low, lowMode);
                    if (high != low) {
                        byName[high].lock(highMode, TIMEOUT);
                        try {
                            writes += use(cache, high, highMode);
                        } finally {
                            byName[high].unlock();
                        }
                    }
                } finally {
                    byName[low].unlock();
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return writes;
    }

    private static LockMode pick(Random random) {
        return switch (random.nextInt(5)) {
            case 0, 1 -> LockMode.SH;
            case 2 -> LockMode.DF;
            default -> LockMode.EX;
        };
    }

    /** @return 1 if it incremented */
    private long use(NodeCache cache, int name, LockMode mode) {
        if (mode == LockMode.DF) {
            return 0;
        }
        // the monitor only orders this node's own threads (the adapter's inode lock); across nodes
        // only the glock keeps the caches coherent
        synchronized (truth[name]) {
            if (mode == LockMode.SH) {
                assertThat(cache.read(name)).as("coherent read of inode " + name).isEqualTo(truth[name].get());
                return 0;
            }
            assertThat(cache.read(name)).as("coherent read before a write of inode " + name)
                    .isEqualTo(truth[name].get());
            cache.increment(name);
            truth[name].incrementAndGet();
        }
        return 1;
    }
}
