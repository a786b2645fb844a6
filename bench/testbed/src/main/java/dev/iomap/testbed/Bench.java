package dev.iomap.testbed;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The numbers of issue 40, item 6, on the running test bed at the delay it was given ({@code
 * bench/cluster-hosts.sh bench} runs it once per delay): glock ping-pong latency between two nodes,
 * appends/s to one file and creates/s in separate directories from 1, 2 and 3 nodes, and a sequential
 * write from one node (the kernel-side baseline, fio's nbd engine over the same link, is the script's).
 * Each measurement runs for {@code testbed.bench.seconds} (default 5) through the nodes' FUSE mounts, in
 * directories of its own; prints one {@code metric value} line each.
 */
public final class Bench {
    private final TestBed bed;
    private final long nanos;

    private Bench(TestBed bed, long seconds) {
        this.bed = bed;
        this.nanos = TimeUnit.SECONDS.toNanos(seconds);
    }

    /**
     * @param args the delay's label (e.g. {@code 200us})
     * @throws IOException if a node's mount fails an operation
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws IOException, InterruptedException {
        Bench bench = new Bench(TestBed.fromProperties(), Long.getLong("testbed.bench.seconds", 5));
        String delay = args.length > 0 ? args[0] : "?";
        long seqMiB = Long.getLong("testbed.bench.seqMiB", 1024);
        Workload.prepare(bench.bed, "n1");
        System.out.printf("delay %s: glock ping-pong n1<->n2 (4 KiB write + fsync each) %.2f ms%n", delay,
                bench.pingPong() / 1e6);
        for (int k = 1; k <= TestBed.NODES.size(); k++) {
            System.out.printf("delay %s: appends/s to one file from %d node(s) %.0f%n", delay, k, bench.appends(k));
        }
        for (int k = 1; k <= TestBed.NODES.size(); k++) {
            System.out.printf("delay %s: creates/s in separate directories from %d node(s) %.0f%n", delay, k,
                    bench.creates(k));
        }
        if (seqMiB > 0) {
            System.out.printf("delay %s: sequential write of %d MiB from n1 (1 MiB writes, one fsync) %.1f MiB/s%n",
                    delay, seqMiB, bench.sequential(seqMiB));
        }
    }

    /** @return mean ns per write when n1 and n2 write one file in turn (every write moves the glock) */
    private double pingPong() throws IOException {
        String name = "pp-" + System.nanoTime();
        Files.createFile(bed.mount("n1").resolve(name));
        ByteBuffer block = ByteBuffer.allocate(4096);
        long rounds = 0;
        long start = System.nanoTime();
        while (System.nanoTime() - start < nanos) {
            String node = rounds % 2 == 0 ? "n1" : "n2";
            try (FileChannel ch = FileChannel.open(bed.mount(node).resolve(name), StandardOpenOption.WRITE)) {
                ch.write(block.clear(), 0);
                ch.force(true);
            }
            rounds++;
        }
        return (System.nanoTime() - start) / (double) rounds;
    }

    /** @return 64-byte O_APPEND writes per second to one file, from the first {@code k} nodes at once */
    private double appends(int k) throws IOException, InterruptedException {
        String name = "ap-" + k + "-" + System.nanoTime();
        Files.createFile(bed.mount("n1").resolve(name));
        return parallel(k, (node, deadline) -> {
            long count = 0;
            try (FileChannel ch = FileChannel.open(bed.mount(node).resolve(name), StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND)) {
                ByteBuffer record = ByteBuffer.wrap(HistoryChecker.record(node + ":0"));
                for (; System.nanoTime() < deadline; count++) {
                    ch.write(record.clear());
                }
            }
            return count;
        });
    }

    /** @return empty files created per second, each of the first {@code k} nodes in a directory of its own */
    private double creates(int k) throws IOException, InterruptedException {
        String run = "cr-" + k + "-" + System.nanoTime();
        for (int i = 0; i < k; i++) {
            Files.createDirectories(bed.mount(TestBed.NODES.get(i)).resolve(run).resolve(TestBed.NODES.get(i)));
        }
        return parallel(k, (node, deadline) -> {
            Path dir = bed.mount(node).resolve(run).resolve(node);
            long count = 0;
            for (; System.nanoTime() < deadline; count++) {
                Files.createFile(dir.resolve("f" + count));
            }
            return count;
        });
    }

    /** @return MiB/s of a sequential write of {@code mib} MiB from n1, fsync'd at the end */
    private double sequential(long mib) throws IOException {
        Path file = bed.mount("n1").resolve("seq-" + System.nanoTime());
        ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
        while (chunk.hasRemaining()) {
            chunk.put((byte) 0x6b);
        }
        long start = System.nanoTime();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long i = 0; i < mib; i++) {
                chunk.clear();
                while (chunk.hasRemaining()) {
                    ch.write(chunk);
                }
            }
            ch.force(true);
        }
        double mibPerSecond = mib / ((System.nanoTime() - start) / 1e9);
        Files.delete(file);
        return mibPerSecond;
    }

    /** One node's timed loop. */
    @FunctionalInterface
    private interface Loop {
        /** @return how many operations {@code node} completed before {@code deadline} (System.nanoTime) */
        long run(String node, long deadline) throws IOException;
    }

    /** @return operations per second of the first {@code k} nodes' loops, run at once for the measurement's time */
    private double parallel(int k, Loop loop) throws IOException, InterruptedException {
        AtomicLong count = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        List<IOException> errors = new ArrayList<>();
        long deadline = System.nanoTime() + nanos;
        for (String node : TestBed.NODES.subList(0, k)) {
            threads.add(Thread.ofPlatform().name("bench-" + node).start(() -> {
                try {
                    count.addAndGet(loop.run(node, deadline));
                } catch (IOException e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!errors.isEmpty()) {
            throw errors.getFirst();
        }
        return count.get() / (nanos / 1e9);
    }
}
