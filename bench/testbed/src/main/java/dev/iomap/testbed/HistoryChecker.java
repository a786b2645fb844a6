package dev.iomap.testbed;

import dev.iomap.testbed.History.Op;
import dev.iomap.testbed.History.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks a scenario's {@link History} against what a cluster filesystem promises. Every value written is
 * unique, so each read names the one write it saw, and the rules of a register apply directly:
 *
 * <ul>
 *   <li><b>close-to-open, fsync'd writes kept</b> (per register file): a read returns one written value
 *       (never a mix: torn), from a write invoked before the read completed, never the empty file once a
 *       write completed before the read began, and never a value that a later write had replaced before
 *       the read began: a write {@code w2} that succeeded (fsync included) and began after {@code w}
 *       could last have taken effect and ended before the read began. A later read never returns an
 *       older value than an earlier read that ended before it began. The final reads, after the fault,
 *       therefore show every fsync'd write or a newer one;</li>
 *   <li><b>late writes</b>: a write that did not succeed may have taken effect at any time after it was
 *       invoked, but not after its node was fenced (the {@code fence} events); one invoked while its node
 *       was fenced must neither succeed nor ever be seen;</li>
 *   <li><b>appends</b>: the append file read at the end is whole 64-byte records, each appended once,
 *       each node's in its order, every append that succeeded among them, none invoked while fenced.</li>
 * </ul>
 *
 * <p>These are the conditions of linearizability for a register whose writes are unique (each read is
 * mapped to its write), checked by comparing operation intervals, quadratic in the operations of one
 * file; no search is needed. Thread-confined.
 */
public final class HistoryChecker {
    /** One record of the append file: {@code A|NODE|SEQ|} padded with dots to 63 bytes, then a newline. */
    public static final int RECORD = 64;
    private static final Pattern RECORD_PATTERN = Pattern.compile("A\\|(n\\d+)\\|(\\d+)\\|\\.*\n");

    private final History history;
    private final Path dir;
    private final Map<String, List<long[]>> fenced = new HashMap<>();
    private final List<String> violations = new ArrayList<>();

    /**
     * @param history the history
     * @param dir where the {@code readlog} operations' contents are
     */
    public HistoryChecker(History history, Path dir) {
        this.history = history;
        this.dir = dir;
        for (History.Event e : history.events()) {
            if (e.name().equals("fence")) {
                fenced.computeIfAbsent(e.node(), k -> new ArrayList<>()).add(new long[] {e.time(), Long.MAX_VALUE});
            } else if (e.name().equals("unfence")) {
                List<long[]> intervals = fenced.getOrDefault(e.node(), List.of());
                if (!intervals.isEmpty() && intervals.getLast()[1] == Long.MAX_VALUE) {
                    intervals.getLast()[1] = e.time();
                }
            }
        }
    }

    /**
     * @return every violation found, one line each; empty if the history keeps every promise
     * @throws IOException if a read append file cannot be read
     */
    public List<String> check() throws IOException {
        Map<String, List<Op>> byKey = new HashMap<>();
        for (Op op : history.ops()) {
            if (op.kind().equals("write") || op.kind().equals("read")) {
                byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
            }
            if (op.writes() && op.result() == Result.OK && fencedAt(op.node(), op.invoke()) >= 0) {
                violations.add(op.node() + " " + op.kind() + " " + op.value() + " succeeded though invoked while "
                        + op.node() + " was fenced");
            }
        }
        byKey.forEach(this::checkRegister);
        checkAppends();
        return violations;
    }

    /** @return the time the fence began if {@code node} was fenced at {@code t}, else -1 */
    private long fencedAt(String node, long t) {
        for (long[] interval : fenced.getOrDefault(node, List.of())) {
            if (interval[0] <= t && t < interval[1]) {
                return interval[0];
            }
        }
        return -1;
    }

    /** @return the latest time {@code w} can have taken effect */
    private long latest(Op w) {
        if (w.result() == Result.OK) {
            return w.complete();
        }
        long at = fencedAt(w.node(), w.invoke());
        if (at >= 0) {
            return at;   // invoked while fenced: it must never take effect; before its invocation works as that
        }
        long first = Long.MAX_VALUE;
        for (long[] interval : fenced.getOrDefault(w.node(), List.of())) {
            if (interval[0] > w.invoke()) {
                first = Math.min(first, interval[0]);
            }
        }
        return first;
    }

    private void checkRegister(String key, List<Op> ops) {
        Map<String, Op> writes = new HashMap<>();
        List<Op> okWrites = new ArrayList<>();
        List<Op> reads = new ArrayList<>();
        for (Op op : ops) {
            if (op.kind().equals("write")) {
                writes.put(op.value(), op);
                if (op.result() == Result.OK) {
                    okWrites.add(op);
                }
            } else if (op.result() == Result.OK) {
                reads.add(op);
            }
        }
        Map<Op, Op> source = new HashMap<>();
        for (Op r : reads) {
            Op w = checkRead(key, r, writes, okWrites);
            if (w != null) {
                source.put(r, w);
            }
        }
        checkReadOrder(key, reads, source);
    }

    /** @return the write read, or null (the empty file, or a violation recorded) */
    private Op checkRead(String key, Op r, Map<String, Op> writes, List<Op> okWrites) {
        String at = key + ": " + r.node() + "'s read #" + r.id();
        if (r.value().equals("TORN")) {
            violations.add(at + " saw a torn value (not one write's bytes)");
            return null;
        }
        if (r.value().isEmpty()) {
            for (Op w2 : okWrites) {
                if (w2.complete() < r.invoke()) {
                    violations.add(at + " saw the empty file though " + w2.node() + "'s write " + w2.value()
                            + " had completed (fsync'd) before it began: a lost write");
                    return null;
                }
            }
            return null;
        }
        Op w = writes.get(r.value());
        if (w == null) {
            violations.add(at + " saw " + r.value() + ", which no operation wrote");
            return null;
        }
        if (w.invoke() > r.complete()) {
            violations.add(at + " saw " + r.value() + " before it was written");
            return null;
        }
        if (latest(w) < w.invoke()) {
            violations.add(at + " saw " + r.value() + ", written by " + w.node() + " while it was fenced: a late write landed");
            return null;
        }
        for (Op w2 : okWrites) {
            if (w2 != w && latest(w) < w2.invoke() && w2.complete() < r.invoke()) {
                violations.add(at + " saw " + r.value() + " though " + w2.node() + "'s write " + w2.value()
                        + " had replaced it (fsync'd) before the read began"
                        + (w.result() == Result.OK ? "" : " (" + w.value() + " did not succeed: it landed late)"));
                return null;
            }
        }
        return w;
    }

    /** A read that began after another ended never returns an older value. */
    private void checkReadOrder(String key, List<Op> reads, Map<Op, Op> source) {
        for (Op r1 : reads) {
            for (Op r2 : reads) {
                if (r1.complete() >= r2.invoke() || r1.value().isEmpty() || r1.value().equals("TORN")) {
                    continue;
                }
                Op w1 = source.get(r1);
                if (w1 == null) {
                    continue;
                }
                if (r2.value().isEmpty()) {
                    violations.add(key + ": " + r2.node() + "'s read #" + r2.id() + " saw the empty file after "
                            + r1.node() + "'s read #" + r1.id() + " had seen " + r1.value());
                    continue;
                }
                Op w2 = source.get(r2);
                if (w2 != null && w2 != w1 && latest(w2) < w1.invoke()) {
                    violations.add(key + ": " + r2.node() + "'s read #" + r2.id() + " saw " + r2.value() + ", older than "
                            + r1.value() + " which " + r1.node() + "'s read #" + r1.id() + " had seen before it began");
                }
            }
        }
    }

    private void checkAppends() throws IOException {
        Map<String, Op> appends = new HashMap<>();
        for (Op op : history.ops()) {
            if (op.kind().equals("append")) {
                appends.put(op.value(), op);
            }
        }
        for (Op read : history.ops()) {
            if (read.kind().equals("readlog") && read.result() == Result.OK) {
                checkLog(read, appends, Files.readAllBytes(dir.resolve(read.value())));
            }
        }
    }

    private void checkLog(Op read, Map<String, Op> appends, byte[] content) {
        String at = read.key() + " as " + read.node() + " read it at the end (#" + read.id() + ")";
        if (content.length % RECORD != 0) {
            violations.add(at + ": " + content.length + " bytes, not whole records: torn");
        }
        Set<String> seen = new HashSet<>();
        Map<String, Long> lastSeq = new HashMap<>();
        for (int off = 0; off + RECORD <= content.length; off += RECORD) {
            String record = new String(content, off, RECORD, StandardCharsets.US_ASCII);
            Matcher m = RECORD_PATTERN.matcher(record);
            if (!m.matches()) {
                violations.add(at + ": the record at " + off + " is torn: " + record.strip());
                continue;
            }
            String value = m.group(1) + ":" + m.group(2);
            if (!seen.add(value)) {
                violations.add(at + ": " + value + " is there twice");
            }
            Op op = appends.get(value);
            if (op == null || op.invoke() > read.complete()) {
                violations.add(at + ": " + value + " was never appended");
            } else if (latest(op) < op.invoke()) {
                violations.add(at + ": " + value + " was appended while " + op.node() + " was fenced: a late write landed");
            }
            long seq = Long.parseLong(m.group(2));
            Long last = lastSeq.put(m.group(1), seq);
            if (last != null && last > seq) {
                violations.add(at + ": " + value + " comes after " + m.group(1) + ":" + last + ", out of order");
            }
        }
        for (Op op : appends.values()) {
            if (op.result() == Result.OK && op.complete() < read.invoke() && !seen.contains(op.value())) {
                violations.add(at + ": " + op.value() + ", appended and fsync'd by " + op.node() + ", is missing: lost");
            }
        }
    }

    /**
     * @param value {@code NODE:SEQ}
     * @return its record in the append file
     */
    public static byte[] record(String value) {
        String[] parts = value.split(":");
        StringBuilder s = new StringBuilder("A|" + parts[0] + "|" + parts[1] + "|");
        while (s.length() < RECORD - 1) {
            s.append('.');
        }
        return s.append('\n').toString().getBytes(StandardCharsets.US_ASCII);
    }
}
