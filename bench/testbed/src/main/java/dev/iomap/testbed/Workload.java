package dev.iomap.testbed;

import dev.iomap.testbed.History.Op;
import dev.iomap.testbed.History.Result;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The scenarios' load: one thread per node, through its FUSE mount, in a loop until stopped: overwrite a
 * shared register file with a unique value and fsync it, read a register file whole, or append a unique
 * 64-byte record to the shared append file with O_APPEND and fsync it; every operation recorded in the
 * {@link History}. An operation still blocked when the load stops is recorded as {@code INFO}.
 */
public final class Workload {
    /** Register files, shared by every node. */
    public static final int REGISTERS = 6;
    /** A register value's size: 256 units of 32 bytes, each naming the value. */
    public static final int VALUE_BYTES = 8192;
    private static final int UNIT = 32;

    private final History history;
    private final TestBed bed;
    private final List<String> nodes;
    private final AtomicLong sequence = new AtomicLong();
    private final Map<String, Op> inFlight = new ConcurrentHashMap<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean stopped;

    /**
     * @param history where operations go
     * @param bed the test bed
     * @param nodes the nodes that run the load
     */
    public Workload(History history, TestBed bed, List<String> nodes) {
        this.history = history;
        this.bed = bed;
        this.nodes = nodes;
    }

    /** @return register file {@code i}, relative to a mount point */
    static String register(int i) {
        return "reg/r" + i;
    }

    /** The append file, relative to a mount point. */
    static final String LOG = "app/log";

    /**
     * Creates the directories and the empty files, through {@code node}.
     *
     * @throws IOException if it fails
     */
    public static void prepare(TestBed bed, String node) throws IOException {
        Path mnt = bed.mount(node);
        Files.createDirectories(mnt.resolve("reg"));
        Files.createDirectories(mnt.resolve("app"));
        for (int i = 0; i < REGISTERS; i++) {
            touch(mnt.resolve(register(i)));
        }
        touch(mnt.resolve(LOG));
    }

    private static void touch(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
    }

    /** Starts one thread per node. */
    public void start() {
        for (String node : nodes) {
            Thread t = Thread.ofPlatform().daemon().name("load-" + node).start(() -> loop(node));
            threads.add(t);
        }
    }

    private void loop(String node) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (!stopped) {
            int choice = random.nextInt(10);
            boolean ok;
            if (choice < 4) {
                ok = run(node, "write", register(random.nextInt(REGISTERS)), node + ":" + sequence.incrementAndGet());
            } else if (choice < 8) {
                ok = run(node, "read", register(random.nextInt(REGISTERS)), null);
            } else {
                ok = run(node, "append", LOG, node + ":" + sequence.incrementAndGet());
            }
            sleep(ok ? 20 : 200);
        }
    }

    /** Runs one operation, recorded; @return whether it succeeded. */
    private boolean run(String node, String kind, String key, String value) {
        long id = history.nextId();
        long invoke = history.now();
        inFlight.put(node, new Op(id, node, kind, key, value == null ? "" : value, invoke, -1, Result.INFO, ""));
        String seen = value;
        Result result = Result.OK;
        String error = "";
        long[] durable = {-1};
        try {
            Path file = bed.mount(node).resolve(key);
            switch (kind) {
                case "write" -> writeRegister(file, value, () -> durable[0] = history.now());
                case "read" -> seen = readRegister(file);
                default -> append(file, value, () -> durable[0] = history.now());
            }
        } catch (IOException | RuntimeException e) {
            result = Result.FAIL;
            error = e.toString();
            seen = value == null ? "" : value;
        }
        // a write completes when its fsync returned: what comes after (close, a FUSE flush and release that
        // may queue behind requests blocked on glocks) writes no data; a failed close still fails it
        long complete = durable[0] >= 0 ? durable[0] : history.now();
        inFlight.remove(node);
        if (!(stopped && result == Result.FAIL && kind.equals("read"))) {
            history.add(new Op(id, node, kind, key, seen, invoke, complete, result, error));
        }
        return result == Result.OK;
    }

    /**
     * Overwrites register file {@code file} with {@code value} and fsyncs it.
     *
     * @param fsynced called right after the fsync returned
     */
    static void writeRegister(Path file, String value, Runnable fsynced) throws IOException {
        byte[] unit = String.format("W|%-29s\n", value + "|").replace(' ', '-').getBytes(StandardCharsets.US_ASCII);
        ByteBuffer bytes = ByteBuffer.allocate(VALUE_BYTES);
        while (bytes.hasRemaining()) {
            bytes.put(unit, 0, Math.min(unit.length, bytes.remaining()));
        }
        bytes.flip();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            while (bytes.hasRemaining()) {
                ch.write(bytes, bytes.position());
            }
            ch.force(true);
            fsynced.run();
        }
    }

    /** @return the value the file holds: "" for the empty file, TORN for anything but one value whole */
    static String readRegister(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        return decode(bytes);
    }

    /** @return the value {@code bytes} hold: "" when empty, TORN unless one value whole */
    static String decode(byte[] bytes) {
        if (bytes.length == 0) {
            return "";
        }
        if (bytes.length != VALUE_BYTES) {
            return "TORN";
        }
        String first = new String(bytes, 0, UNIT, StandardCharsets.US_ASCII);
        for (int off = UNIT; off < bytes.length; off += UNIT) {
            if (!new String(bytes, off, UNIT, StandardCharsets.US_ASCII).equals(first)) {
                return "TORN";
            }
        }
        if (!first.startsWith("W|") || !first.endsWith("\n")) {
            return "TORN";
        }
        String body = first.substring(2, UNIT - 1);
        return body.substring(0, body.indexOf('|'));
    }

    private static void append(Path file, String value, Runnable fsynced) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ByteBuffer bytes = ByteBuffer.wrap(HistoryChecker.record(value));
            while (bytes.hasRemaining()) {
                ch.write(bytes);
            }
            ch.force(true);
            fsynced.run();
        }
    }

    /**
     * Stops the load: waits up to {@code graceSeconds} for each thread's operation, then records what is
     * still blocked as {@code INFO} and leaves those threads (daemons) behind.
     */
    public void stop(int graceSeconds) {
        stopped = true;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(graceSeconds);
        for (Thread t : threads) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        for (Op op : inFlight.values()) {
            history.add(op);
        }
        inFlight.clear();
    }

    /**
     * Reads every register file and the append file through each given node (one at a time, each read
     * bounded by 60 s), recorded as operations; the append file's contents go to {@code dir}.
     *
     * @return the reads that failed or hung, one line each
     */
    public static List<String> finalReads(History history, TestBed bed, List<String> nodes, Path dir) {
        List<String> problems = new ArrayList<>();
        ExecutorService pool = Executors.newCachedThreadPool(r -> Thread.ofPlatform().daemon().unstarted(r));
        try {
            for (String node : nodes) {
                for (int i = 0; i <= REGISTERS; i++) {
                    String key = i < REGISTERS ? register(i) : LOG;
                    long id = history.nextId();
                    long invoke = history.now();
                    Path file = bed.mount(node).resolve(key);
                    Future<byte[]> read = pool.submit(() -> Files.readAllBytes(file));
                    try {
                        byte[] bytes = read.get(60, TimeUnit.SECONDS);
                        long complete = history.now();
                        String value;
                        if (i < REGISTERS) {
                            value = decode(bytes);
                            history.add(new Op(id, node, "read", key, value, invoke, complete, Result.OK, ""));
                        } else {
                            value = "log-" + id + ".bin";
                            Files.write(dir.resolve(value), bytes);
                            history.add(new Op(id, node, "readlog", key, value, invoke, complete, Result.OK, ""));
                        }
                    } catch (TimeoutException e) {
                        problems.add(node + " did not read " + key + " within 60 s");
                    } catch (Exception e) {
                        problems.add(node + " could not read " + key + ": " + e.getCause());
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return problems;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
