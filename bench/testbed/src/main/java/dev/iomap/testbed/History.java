package dev.iomap.testbed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a scenario did and saw: operations (which node, what, on which file, the value written or read,
 * when invoked and when completed, how it ended) and events (faults, fences, remounts), all timed on
 * this JVM's {@link System#nanoTime} from the history's start. Saved as tab-separated lines
 * ({@link #save}), read back by {@link #load}. Thread-safe.
 */
public final class History {
    /** How an operation ended. */
    public enum Result {
        /** it returned success (a write: after its fsync) */
        OK,
        /** it returned an error: a write may or may not have taken effect */
        FAIL,
        /** it never returned while the scenario ran: as {@link #FAIL} */
        INFO
    }

    /**
     * One operation.
     *
     * @param id its number, in invocation order
     * @param node the node it ran on ({@code n1}..)
     * @param kind {@code write} (a register file overwritten and fsync'd), {@code read} (a register file
     *     read whole), {@code append} (a record appended with O_APPEND and fsync'd), {@code readlog} (the
     *     append file read whole)
     * @param key the file
     * @param value the value written or read ({@code ""}: the empty file; {@code TORN}: not one value);
     *     for {@code readlog} the file holding what was read
     * @param invoke when it was invoked (ns from the history's start)
     * @param complete when it completed, or -1
     * @param result how it ended
     * @param error the error's message, or {@code ""}
     */
    public record Op(long id, String node, String kind, String key, String value, long invoke, long complete,
            Result result, String error) {
        /** @return whether it is a write of a register or an append */
        public boolean writes() {
            return kind.equals("write") || kind.equals("append");
        }

        /** @return how long it took, or -1 if it never completed */
        public long latency() {
            return complete < 0 ? -1 : complete - invoke;
        }
    }

    /**
     * A fault or a step of the scenario.
     *
     * @param name e.g. {@code kill-node}, {@code fence}, {@code unfence}
     * @param node the node or server it concerns, or {@code -}
     * @param time when (ns from the history's start)
     */
    public record Event(String name, String node, long time) {
    }

    private final long startNanos;
    private final long startEpochNanos;
    private final AtomicLong ids = new AtomicLong();
    private final List<Op> ops = new ArrayList<>();
    private final List<Event> events = new ArrayList<>();

    /** A new history starting now. */
    public History() {
        this(System.nanoTime(), epochNanosNow());
    }

    private History(long startNanos, long startEpochNanos) {
        this.startNanos = startNanos;
        this.startEpochNanos = startEpochNanos;
    }

    /** @return the wall clock now, in ns since the epoch (microsecond resolution) */
    static long epochNanosNow() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** @return ns since the history's start */
    public long now() {
        return System.nanoTime() - startNanos;
    }

    /**
     * @param epochNanos a wall-clock time (e.g. from the fence log)
     * @return the same time on the history's clock
     */
    public long fromEpoch(long epochNanos) {
        return epochNanos - startEpochNanos;
    }

    /** @return a new operation id */
    public long nextId() {
        return ids.incrementAndGet();
    }

    /** Records a completed (or abandoned) operation. */
    public synchronized void add(Op op) {
        ops.add(op);
    }

    /** Records an event now. */
    public void event(String name, String node) {
        event(new Event(name, node, now()));
    }

    /** Records an event. */
    public synchronized void event(Event event) {
        events.add(event);
    }

    /** @return the operations so far, by id */
    public synchronized List<Op> ops() {
        List<Op> copy = new ArrayList<>(ops);
        copy.sort(java.util.Comparator.comparingLong(Op::id));
        return copy;
    }

    /** @return the events so far, by time */
    public synchronized List<Event> events() {
        List<Event> copy = new ArrayList<>(events);
        copy.sort(java.util.Comparator.comparingLong(Event::time));
        return copy;
    }

    /**
     * Writes {@code history.tsv}: one line per operation ({@code op ID NODE KIND KEY VALUE INVOKE COMPLETE
     * RESULT ERROR}) and per event ({@code event NAME NODE TIME}), tab-separated.
     *
     * @param file where
     * @throws IOException if it cannot be written
     */
    public void save(Path file) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add("# start " + startNanos + " " + startEpochNanos);
        for (Op op : ops()) {
            lines.add(String.join("\t", "op", Long.toString(op.id()), op.node(), op.kind(), op.key(), op.value(),
                    Long.toString(op.invoke()), Long.toString(op.complete()), op.result().name(),
                    op.error().replaceAll("[\\t\\n]", " ")));
        }
        for (Event e : events()) {
            lines.add(String.join("\t", "event", e.name(), e.node(), Long.toString(e.time())));
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    /**
     * @param file a file {@link #save} wrote
     * @return the history it holds
     * @throws IOException if it cannot be read or is not one
     */
    public static History load(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        String[] start = lines.get(0).split(" ");
        History history = new History(Long.parseLong(start[2]), Long.parseLong(start[3]));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split("\t", -1);
            if (f[0].equals("op")) {
                history.add(new Op(Long.parseLong(f[1]), f[2], f[3], f[4], f[5], Long.parseLong(f[6]),
                        Long.parseLong(f[7]), Result.valueOf(f[8]), f[9]));
            } else if (f[0].equals("event")) {
                history.event(new Event(f[1], f[2], Long.parseLong(f[3])));
            } else {
                throw new IOException(file + ": not a history line: " + line);
            }
        }
        history.ids.set(history.ops.stream().mapToLong(Op::id).max().orElse(0));
        return history;
    }
}
