package dev.iomap.testbed;

import dev.iomap.testbed.History.Op;
import dev.iomap.testbed.History.Result;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fault scenarios of issue 40, item 4, against the running test bed ({@code bench/cluster-hosts.sh
 * test [NAME...]}). Each starts from a fresh filesystem mounted by all three nodes, runs the
 * {@link Workload} on all of them, injects its fault through the test bed's steps, brings every node
 * back (a fenced node is unmounted, unfenced and mounted again, as a cluster manager restarts a fenced
 * host), reads every file through every node, then checks the history ({@link HistoryChecker}), the
 * glock holders in ZooKeeper's log ({@link GlockHolders}) and its own promises, and prints one line:
 * {@code PASS name: ...} or {@code FAIL name: ...}. Exit status 1 if any failed.
 */
public final class Scenarios {
    /** The nodes' ZooKeeper session timeout ({@code ZkClusterJoinProvider.SESSION_TIMEOUT}). */
    static final long SESSION_NS = TimeUnit.SECONDS.toNanos(10);
    /** Its lease: the session minus a fifth. */
    static final long LEASE_NS = SESSION_NS - SESSION_NS / 5;
    /** The recovery margin after a session expired. */
    static final long MARGIN_NS = TimeUnit.SECONDS.toNanos(3);
    /** What a loaded two-core machine adds to any bound on stalls: JVM pauses, scheduling, glock handoffs. */
    static final long ALLOWANCE_NS = TimeUnit.SECONDS.toNanos(7);
    private static final Pattern RECOVERY = Pattern.compile("recovered journal \\d+ of dead node (n\\d)\\.\\d+: \\d+ "
            + "transactions replayed in (\\d+) ms");

    private final TestBed bed;
    private final Map<String, Scenario> scenarios = new LinkedHashMap<>();

    /** One scenario's fault and its own checks, given the run. */
    @FunctionalInterface
    interface Scenario {
        void run(Run run) throws Exception;
    }

    Scenarios(TestBed bed) {
        this.bed = bed;
        scenarios.put("kill-node", this::killNode);
        scenarios.put("partition-zk", this::partitionZk);
        scenarios.put("partition-storage", this::partitionStorage);
        scenarios.put("pause-node", this::pauseNode);
        scenarios.put("kill-zk-leader", this::killZkLeader);
        scenarios.put("kill-quorum", this::killQuorum);
        scenarios.put("restart-nbd", this::restartNbd);
        scenarios.put("same-node-id", this::sameNodeId);
    }

    /**
     * @param args scenario names (default: all)
     * @throws Exception if the test bed fails outside a scenario
     */
    public static void main(String[] args) throws Exception {
        Scenarios all = new Scenarios(TestBed.fromProperties());
        List<String> names = args.length == 0 ? List.copyOf(all.scenarios.keySet()) : List.of(args);
        int failed = 0;
        for (String name : names) {
            if (!all.scenarios.containsKey(name)) {
                System.out.println("FAIL " + name + ": no such scenario; there are " + all.scenarios.keySet());
                failed++;
                continue;
            }
            String verdict = all.run(name);
            System.out.println(verdict);
            System.out.flush();
            if (!verdict.startsWith("PASS")) {
                failed++;
            }
        }
        System.out.println((names.size() - failed) + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    /** One scenario's run: its history, load, findings. */
    final class Run {
        final String name;
        final Path dir;
        final History history = new History();
        final Workload load;
        final List<String> problems = new ArrayList<>();
        final List<String> notes = new ArrayList<>();

        Run(String name, Path dir) {
            this.name = name;
            this.dir = dir;
            this.load = new Workload(history, bed, TestBed.NODES);
        }

        /** Records an event and runs a step that must succeed. */
        String step(String event, String node, String... args) throws IOException {
            history.event(event, node);
            return bed.must(args);
        }

        void require(boolean condition, String problem) {
            if (!condition) {
                problems.add(problem);
            }
        }

        /** @return the time of the first event {@code name} on {@code node}, or -1 */
        long eventTime(String name, String node) {
            return history.events().stream().filter(e -> e.name().equals(name) && e.node().equals(node))
                    .mapToLong(History.Event::time).min().orElse(-1);
        }

        /** Waits up to {@code seconds} for the fence agent to fence {@code node}; @return when (history time) or -1. */
        long awaitFence(String node, int seconds) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < deadline) {
                for (String[] entry : bed.fenceLog()) {
                    long t = history.fromEpoch(Long.parseLong(entry[0]));
                    if (entry[1].equals("off") && entry[2].equals(node) && t >= 0) {
                        return t;
                    }
                }
                Thread.sleep(200);
            }
            return -1;
        }

        /** The longest an operation of {@code nodes} invoked after {@code from} took (an unfinished one: till now). */
        long longestStall(List<String> nodes, long from) {
            long now = history.now();
            return history.ops().stream().filter(op -> nodes.contains(op.node()) && op.invoke() >= from)
                    .mapToLong(op -> op.complete() < 0 ? now - op.invoke() : op.latency()).max().orElse(0);
        }

        /** Checks that survivors' operations after {@code from} waited at most {@code bound}. */
        void boundStall(List<String> survivors, long from, long bound, String why) {
            long stall = longestStall(survivors, from);
            notes.add(String.format("longest stall of %s %.1f s (bound %.1f s: %s)", String.join(",", survivors),
                    stall / 1e9, bound / 1e9, why));
            require(stall <= bound, String.format("%s waited %.1f s, more than %.1f s", String.join(",", survivors),
                    stall / 1e9, bound / 1e9));
        }

        /** @return the OK writes of {@code node} that completed in [from, to) */
        List<Op> okWrites(String node, long from, long to) {
            return history.ops().stream().filter(op -> op.node().equals(node) && op.writes()
                    && op.result() == Result.OK && op.complete() >= from && op.complete() < to).toList();
        }

        /** Unmounts {@code node}, unfences it and mounts it again (a fenced host restarted by the cluster manager). */
        void rejoin(String node) throws IOException {
            step("unmount", node, "unmount", node);
            step("unfence", node, "unfence", node);
            step("mount", node, "mount", node);
        }
    }

    String run(String name) {
        Path dir = bed.dir().resolve("runs").resolve(name);
        Run run = null;
        try {
            Files.createDirectories(dir);
            bed.must("fresh");
            Files.writeString(bed.dir().resolve("fence.log"), "");
            run = new Run(name, dir);
            Workload.prepare(bed, "n1");
            run.load.start();
            Thread.sleep(4000);
            scenarios.get(name).run(run);
            run.load.stop(20);
            run.problems.addAll(Workload.finalReads(run.history, bed, TestBed.NODES, dir));
            for (String[] entry : bed.fenceLog()) {
                String event = entry[1].equals("off") ? "fence" : entry[1].equals("on") ? "unfence" : null;
                if (event != null) {
                    run.history.event(new History.Event(event, entry[2], run.history.fromEpoch(Long.parseLong(entry[0]))));
                }
            }
            run.history.save(dir.resolve("history.tsv"));
            run.problems.addAll(new HistoryChecker(run.history, dir).check());
            GlockHolders holders = GlockHolders.fromLogs(List.of(bed.dir().resolve("zk1"), bed.dir().resolve("zk2"),
                    bed.dir().resolve("zk3")));
            run.problems.addAll(holders.violations());
            long ops = run.history.ops().stream().filter(op -> op.result() == Result.OK).count();
            String summary = ops + " operations ok; " + holders.summary() + "; " + String.join("; ", run.notes);
            Files.writeString(dir.resolve("problems.txt"), String.join("\n", run.problems) + "\n");
            if (run.problems.isEmpty()) {
                return "PASS " + name + ": " + summary;
            }
            return "FAIL " + name + ": " + run.problems.size() + " problems, first: " + run.problems.getFirst() + " ("
                    + dir.resolve("problems.txt") + "); " + summary;
        } catch (Exception e) {
            return "FAIL " + name + ": the scenario broke: " + e;
        } finally {
            if (run != null) {
                run.load.stop(20);   // a scenario that broke must not leave its load writing into the next one
            }
        }
    }

    /** @return the recoveries the nodes' logs report since the scenario began: dead node -> milliseconds */
    private Map<String, Long> recoveries(Map<String, Integer> logStart) throws IOException {
        Map<String, Long> found = new LinkedHashMap<>();
        for (String node : TestBed.NODES) {
            String log = bed.nodeLog(node);
            Matcher m = RECOVERY.matcher(log.substring(Math.min(log.length(), logStart.getOrDefault(node, 0))));
            while (m.find()) {
                found.merge(m.group(1), Long.parseLong(m.group(2)), Math::max);
            }
        }
        return found;
    }

    private Map<String, Integer> logPositions() throws IOException {
        Map<String, Integer> positions = new LinkedHashMap<>();
        for (String node : TestBed.NODES) {
            positions.put(node, bed.nodeLog(node).length());
        }
        return positions;
    }

    /** A dead node's bound: the session timeout, the margin, the replay, and the allowance. */
    private static long deathBound(Map<String, Long> recoveries, String node) {
        return SESSION_NS + MARGIN_NS + TimeUnit.MILLISECONDS.toNanos(recoveries.getOrDefault(node, 0L)) + ALLOWANCE_NS;
    }

    private void killNode(Run run) throws Exception {
        Map<String, Integer> logs = logPositions();
        long killed = run.history.now();
        run.step("kill-node", "n1", "kill-node", "n1");
        long fenced = run.awaitFence("n1", 40);
        run.require(fenced >= 0, "nobody fenced n1 within 40 s of its death");
        Thread.sleep(8000);
        Map<String, Long> recoveries = recoveries(logs);
        run.require(recoveries.containsKey("n1"), "no survivor reports recovering n1's journal");
        run.notes.add(String.format("n1 fenced %.1f s after kill -9, journal replayed in %d ms", (fenced - killed) / 1e9,
                recoveries.getOrDefault("n1", -1L)));
        run.boundStall(List.of("n2", "n3"), killed, deathBound(recoveries, "n1"), "session + margin + replay + allowance");
        run.step("unfence", "n1", "unfence", "n1");
        run.step("mount", "n1", "mount", "n1");
        Thread.sleep(5000);
    }

    private void partitionZk(Run run) throws Exception {
        Map<String, Integer> logs = logPositions();
        Path trigger = run.dir.resolve("probe.trigger");
        Path result = run.dir.resolve("probe.result");
        Files.deleteIfExists(trigger);
        Files.deleteIfExists(result);
        Process probe = bed.background("probe", "n1", "hold", Long.toString(bed.probeOffset()), trigger.toString(),
                result.toString());
        awaitText(result, "connected", 30);
        long cut = run.history.now();
        run.step("cut-zk", "n1", "cut", "n1", "lk");
        long fenced = run.awaitFence("n1", 45);
        run.require(fenced >= 0, "nobody fenced n1 within 45 s of its partition");
        List<Op> late = run.okWrites("n1", cut + SESSION_NS, Long.MAX_VALUE);
        run.require(late.isEmpty(), "n1 wrote after its session could have expired: " + late.size() + " writes, first #"
                + (late.isEmpty() ? 0 : late.getFirst().id()));
        long lastOk = run.history.ops().stream().filter(op -> op.node().equals("n1") && op.writes()
                && op.result() == Result.OK).mapToLong(Op::complete).max().orElse(cut);
        run.notes.add(String.format("n1's last write completed %.1f s after the cut (lease %.0f s, session %.0f s),"
                + " fenced after %.1f s", (lastOk - cut) / 1e9, LEASE_NS / 1e9, SESSION_NS / 1e9, (fenced - cut) / 1e9));
        Files.writeString(trigger, "go");
        String held = awaitText(result, "", 30);
        run.require(held.startsWith("refused"), "a connection n1's host opened before it was fenced wrote after it: "
                + held);
        String fresh = bed.must("probe", "n1", "write", Long.toString(bed.probeOffset()));
        run.require(fresh.contains("refused"), "a new connection from n1's host after the fence wrote: " + fresh);
        run.require(!markerLanded(), "the probe's late write landed on the export");
        run.notes.add("late writes from the fenced host: held connection " + held.split(":")[0] + ", new connection "
                + (fresh.contains("refused") ? "refused" : fresh) + ", marker " + (markerLanded() ? "LANDED" : "absent"));
        probe.destroyForcibly();
        Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(cut + TimeUnit.SECONDS.toNanos(25) - run.history.now())));
        Map<String, Long> recoveries = recoveries(logs);
        run.boundStall(List.of("n2", "n3"), cut, deathBound(recoveries, "n1"), "session + margin + replay + allowance");
        long healed = run.history.now();
        run.step("heal-zk", "n1", "heal", "n1", "lk");
        Thread.sleep(10_000);
        List<Op> after = run.okWrites("n1", healed, Long.MAX_VALUE);
        run.require(after.isEmpty(), "n1 wrote after the partition healed, before it rejoined: " + after.size() + " writes");
        run.rejoin("n1");
        Thread.sleep(5000);
    }

    private void partitionStorage(Run run) throws Exception {
        long cut = run.history.now();
        run.step("cut-storage", "n1", "cut", "n1", "sb");
        Thread.sleep(20_000);
        long healed = run.history.now();
        run.step("heal-storage", "n1", "heal", "n1", "sb");
        Thread.sleep(25_000);
        run.boundStall(List.of("n2", "n3"), cut, healed - cut + TimeUnit.SECONDS.toNanos(30),
                "the partition + n1's TCP retransmission backoff + allowance");
        for (String node : TestBed.NODES) {
            run.require(!run.okWrites(node, healed + TimeUnit.SECONDS.toNanos(15), Long.MAX_VALUE).isEmpty(),
                    node + " wrote nothing in the 10 s that ended 25 s after the partition healed");
        }
        run.require(bed.fenceLog().isEmpty(), "a node was fenced though every session lived");
    }

    private void pauseNode(Run run) throws Exception {
        Map<String, Integer> logs = logPositions();
        long stopped = run.history.now();
        run.step("stop-node", "n1", "stop-node", "n1");
        long fenced = run.awaitFence("n1", 40);
        run.require(fenced >= 0, "nobody fenced n1 within 40 s of its pause");
        Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(stopped + TimeUnit.SECONDS.toNanos(22) - run.history.now())));
        long resumed = run.history.now();
        run.step("cont-node", "n1", "cont-node", "n1");
        Thread.sleep(8000);
        List<Op> late = run.okWrites("n1", resumed, Long.MAX_VALUE);
        run.require(late.isEmpty(), "n1 completed " + late.size() + " writes after it resumed past its session");
        Map<String, Long> recoveries = recoveries(logs);
        run.notes.add(String.format("n1 paused %.1f s, fenced after %.1f s; writes after its resume: %d",
                (resumed - stopped) / 1e9, (fenced - stopped) / 1e9, late.size()));
        run.boundStall(List.of("n2", "n3"), stopped, deathBound(recoveries, "n1"), "session + margin + replay + allowance");
        run.rejoin("n1");
        Thread.sleep(5000);
    }

    private void killZkLeader(Run run) throws Exception {
        String leader = bed.must("zk-leader").strip();
        run.require(!leader.isEmpty(), "no ZooKeeper server says it leads");
        long killed = run.history.now();
        run.step("kill-zk", leader, "kill-zk", leader);
        Thread.sleep(15_000);
        run.step("start-zk", leader, "start-zk", leader);
        Thread.sleep(5000);
        run.boundStall(TestBed.NODES, killed, LEASE_NS + ALLOWANCE_NS, "lease + allowance: an election fences nobody");
        for (String node : TestBed.NODES) {
            run.require(!run.okWrites(node, killed + LEASE_NS + ALLOWANCE_NS, Long.MAX_VALUE).isEmpty(),
                    node + " wrote nothing after the election");
        }
        run.require(bed.fenceLog().isEmpty(), "a node was fenced though only the leader died");
        run.notes.add("killed the leader " + leader);
    }

    private void killQuorum(Run run) throws Exception {
        String leader = bed.must("zk-leader").strip();
        List<String> victims = new ArrayList<>(List.of(leader.isEmpty() ? "zk1" : leader));
        victims.add(victims.getFirst().equals("zk2") ? "zk3" : "zk2");
        long killed = run.history.now();
        for (String zk : victims) {
            run.step("kill-zk", zk, "kill-zk", zk);
        }
        Thread.sleep(20_000);
        long back = run.history.now();
        for (String zk : victims) {
            run.step("start-zk", zk, "start-zk", zk);
        }
        for (String node : TestBed.NODES) {
            List<Op> during = run.okWrites(node, killed + LEASE_NS + TimeUnit.SECONDS.toNanos(1), back);
            run.require(during.isEmpty(), node + " completed " + during.size() + " writes without a quorum, past its lease");
        }
        // Nodes whose sessions could not be confirmed for a whole session timeout fenced themselves for good;
        // they come back as a cluster manager would bring them back: one node first, which recovers the others'
        // journals (fencing their hosts), then the others, unfenced.
        Thread.sleep(SESSION_NS / 1_000_000 + 5000);
        for (String node : TestBed.NODES) {
            run.step("unmount", node, "unmount", node);
        }
        run.step("unfence", "n1", "unfence", "n1");
        run.step("mount", "n1", "mount", "n1");
        for (String node : List.of("n2", "n3")) {
            run.awaitFence(node, 30);
        }
        for (String node : List.of("n2", "n3")) {
            run.step("unfence", node, "unfence", node);
            run.step("mount", node, "mount", node);
        }
        Thread.sleep(8000);
        for (String node : TestBed.NODES) {
            run.require(!run.okWrites(node, run.history.now() - TimeUnit.SECONDS.toNanos(6), Long.MAX_VALUE).isEmpty(),
                    node + " wrote nothing after the quorum returned and it rejoined");
        }
        run.notes.add("killed " + victims + " for 20 s");
    }

    private void restartNbd(Run run) throws Exception {
        long killed = run.history.now();
        run.step("kill-nbd", "st", "kill-nbd");
        Thread.sleep(5000);
        run.step("start-nbd", "st", "start-nbd");
        Thread.sleep(20_000);
        for (String node : TestBed.NODES) {
            run.require(!run.okWrites(node, run.history.now() - TimeUnit.SECONDS.toNanos(8), Long.MAX_VALUE).isEmpty(),
                    node + " wrote nothing in the 8 s before the end: it did not reconnect");
        }
        run.boundStall(TestBed.NODES, killed, TimeUnit.SECONDS.toNanos(5) + ALLOWANCE_NS * 2,
                "the server's downtime + reconnection + allowance");
        run.require(bed.fenceLog().isEmpty(), "a node was fenced though only the storage server restarted");
    }

    private void sameNodeId(Run run) throws Exception {
        Path second = bed.dir().resolve("mnt").resolve("second");
        TestBed.Outcome twin = bed.step("mount-as", "n3", "n1", second.toString());
        run.history.event("mount-as-n1", "n3");
        run.require(!twin.ok() && twin.output().contains("in use"),
                "a second mount with node id n1 from n3's host was not refused as in use: " + lastLine(twin.output()));
        Map<String, Integer> logs = logPositions();
        long killed = run.history.now();
        run.step("kill-node", "n1", "kill-node", "n1");
        int refused = 0;
        boolean back = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!back && System.nanoTime() < deadline) {
            TestBed.Outcome mount = bed.step("mount", "n1");
            if (mount.ok()) {
                back = true;
                run.history.event("mount", "n1");
            } else if (mount.output().contains("in use")) {
                refused++;
                Thread.sleep(500);
            } else {
                // fenced by a survivor's recovery meanwhile: the host restarts as a cluster manager restarts it
                run.step("unfence", "n1", "unfence", "n1");
            }
        }
        run.require(back, "n1 could not come back within 60 s of its death");
        run.require(refused > 0, "n1 came back at once, while its dead incarnation's session lived");
        Map<String, Long> recoveries = recoveries(logs);
        run.notes.add(String.format("second n1 refused while n1 lived; after kill -9, %d mounts refused as in use, back"
                + " after %.1f s", refused, (run.history.now() - killed) / 1e9));
        run.require(recoveries.containsKey("n1"), "nobody recovered n1's dead incarnation's journal");
        Thread.sleep(8000);
    }

    private static String lastLine(String text) {
        String[] lines = text.strip().split("\n");
        return lines[lines.length - 1];
    }

    private boolean markerLanded() throws IOException {
        try (RandomAccessFile image = new RandomAccessFile(bed.image().toFile(), "r")) {
            if (image.length() < bed.probeOffset() + 4096) {
                return false;
            }
            image.seek(bed.probeOffset());
            return image.read() == NbdProbe.MARKER;
        }
    }

    /** Waits for {@code file} to hold {@code prefix}...; @return its first line (after a non-empty line if prefix is ""). */
    private static String awaitText(Path file, String prefix, int seconds) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            if (Files.exists(file)) {
                String text = Files.readString(file).strip();
                if (!text.isEmpty() && text.startsWith(prefix) && !(prefix.isEmpty() && text.equals("connected"))) {
                    return text;
                }
            }
            Thread.sleep(50);
        }
        throw new IOException(file + " did not say " + (prefix.isEmpty() ? "anything new" : prefix) + " within "
                + seconds + " s");
    }
}
