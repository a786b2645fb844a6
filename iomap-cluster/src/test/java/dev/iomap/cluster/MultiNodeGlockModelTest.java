package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Seeded random glock traffic: three nodes, two threads each, on three names, against one shared
 * record of who uses which name in which mode and of each node's cached copy of a per-name value.
 * Checks mutual exclusion across nodes (modes in use at once are compatible), that callbacks run only
 * while the node has no use of the name, and coherence: a node's cached copy is never stale.
 * {@code -Diomap.test.seed=N} (0: the fixed default) and {@code -Diomap.cluster.ops=N} (default 600).
 */
class MultiNodeGlockModelTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int NODES = 3;
    private static final int THREADS_PER_NODE = 2;
    private static final List<LockName> NAMES = List.of(LockName.inode(1), LockName.inode(2), LockName.rgrp(0));

    /** The shared record; every method is synchronized. */
    private static final class Model {
        private final Map<LockName, List<Map.Entry<Integer, LockMode>>> inUse = new HashMap<>();
        private final Map<LockName, Long> truth = new HashMap<>();
        private final Map<String, Long> cached = new HashMap<>();
        private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
        long uses;

        synchronized void enter(int node, LockName name, LockMode mode, boolean write) {
            uses++;
            List<Map.Entry<Integer, LockMode>> users = inUse.computeIfAbsent(name, n -> new ArrayList<>());
            for (Map.Entry<Integer, LockMode> user : users) {
                if (user.getKey() != node && !user.getValue().compatibleWith(mode)) {
                    violations.add("node " + node + " uses " + name + " in " + mode + " while node " + user.getKey()
                            + " uses it in " + user.getValue());
                }
            }
            users.add(Map.entry(node, mode));
            long value = truth.getOrDefault(name, 0L);
            String key = node + "/" + name;
            if (mode.allowsCaching()) {
                Long copy = cached.get(key);
                if (copy != null && copy != value) {
                    violations.add("node " + node + " has a stale copy of " + name + ": " + copy + " not " + value);
                }
                cached.put(key, value);
            }
            if (write && mode == LockMode.EX) {
                truth.put(name, value + 1);
                cached.put(key, value + 1);
            }
        }

        synchronized void exit(int node, LockName name, LockMode mode) {
            inUse.get(name).remove(Map.entry(node, mode));
        }

        synchronized void callback(int node, LockName name, String what, boolean dropsCache) {
            for (Map.Entry<Integer, LockMode> user : inUse.getOrDefault(name, List.of())) {
                if (user.getKey() == node) {
                    violations.add(what + " of " + name + " on node " + node + " while it uses it in "
                            + user.getValue());
                }
            }
            if (dropsCache) {
                cached.remove(node + "/" + name);
            }
        }
    }

    @Test
    void randomUsesOnThreeNodesStayExclusiveAndCoherent() throws Exception {
        long seed = Long.getLong("iomap.test.seed", 0L) == 0 ? 20261201L : Long.getLong("iomap.test.seed");
        int ops = Integer.getInteger("iomap.cluster.ops", 600);
        Model model = new Model();
        UUID filesystem = UUID.randomUUID();
        try (ZkTestServer server = new ZkTestServer()) {
            List<ZkLockManager> managers = new ArrayList<>();
            try {
                exercise(server, filesystem, managers, model, seed, ops);
            } finally {
                for (ZkLockManager manager : managers) {
                    manager.close();
                }
            }
        }
    }

    private static void exercise(ZkTestServer server, UUID filesystem, List<ZkLockManager> managers, Model model,
            long seed, int ops) throws Exception {
        List<Map<LockName, LockHandle>> handles = new ArrayList<>();
        for (int node = 0; node < NODES; node++) {
            ZkLockManager manager = new ZkLockManager(server.client(), filesystem, new Incarnation("n" + node, 1),
                    Fence.manual());
            managers.add(manager);
            Map<LockName, LockHandle> byName = new HashMap<>();
            for (LockName name : NAMES) {
                LockHandle handle = manager.acquire(name, LockMode.SH, callbacks(model, node), WAIT);
                model.enter(node, name, LockMode.SH, false);
                model.exit(node, name, LockMode.SH);
                handle.unlock();
                byName.put(name, handle);
            }
            handles.add(byName);
        }
        List<Background<Integer>> workers = new ArrayList<>();
        for (int node = 0; node < NODES; node++) {
            for (int t = 0; t < THREADS_PER_NODE; t++) {
                int thisNode = node;
                Random random = new Random(seed * 31 + (long) node * THREADS_PER_NODE + t);
                workers.add(Background.start("n" + node + "-t" + t, () -> run(random,
                        ops / (NODES * THREADS_PER_NODE), thisNode, handles.get(thisNode), model)));
            }
        }
        for (Background<Integer> worker : workers) {
            assertThat(worker.join()).isEqualTo(ops / (NODES * THREADS_PER_NODE));
        }
        assertThat(model.violations).as("seed %d", seed).isEmpty();
        long perThread = ops / (NODES * THREADS_PER_NODE);
        assertThat(model.uses).isEqualTo((long) NODES * NAMES.size() + perThread * NODES * THREADS_PER_NODE);
        long demotions = managers.stream().mapToLong(m -> m.stats().demotions()).sum();
        assertThat(demotions).as("seed %d: the nodes did contend", seed).isPositive();
    }

    private static Integer run(Random random, int count, int node, Map<LockName, LockHandle> handles, Model model)
            throws Exception {
        for (int i = 0; i < count; i++) {
            LockName name = NAMES.get(random.nextInt(NAMES.size()));
            int roll = random.nextInt(10);
            LockMode wanted = roll < 5 ? LockMode.EX : roll < 9 ? LockMode.SH : LockMode.DF;
            LockHandle handle = handles.get(name);
            handle.lock(wanted, WAIT);
            LockMode held = handle.mode();
            model.enter(node, name, held, true);
            if (random.nextInt(4) == 0) {
                Thread.sleep(1);
            }
            model.exit(node, name, held);
            handle.unlock();
        }
        return count;
    }

    private static DemoteCallbacks callbacks(Model model, int node) {
        return new DemoteCallbacks() {
            @Override
            public void sync(LockName name, LockMode from, LockMode to) {
                model.callback(node, name, "sync " + from + ">" + to, false);
            }

            @Override
            public long invalidate(LockName name, LockMode from, LockMode to) {
                model.callback(node, name, "invalidate " + from + ">" + to, true);
                return 1;
            }
        };
    }
}
