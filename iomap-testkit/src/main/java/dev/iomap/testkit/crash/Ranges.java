package dev.iomap.testkit.crash;

import java.util.BitSet;
import java.util.Map;
import java.util.TreeMap;

/** A set of byte ranges, merged. Not thread-safe. */
final class Ranges {
    private final TreeMap<Long, Long> ranges = new TreeMap<>();

    void add(long from, long to) {
        if (to <= from) {
            return;
        }
        Map.Entry<Long, Long> before = ranges.floorEntry(from);
        if (before != null && before.getValue() >= from) {
            from = before.getKey();
            to = Math.max(to, before.getValue());
        }
        Map.Entry<Long, Long> next = ranges.ceilingEntry(from);
        while (next != null && next.getKey() <= to) {
            to = Math.max(to, next.getValue());
            ranges.remove(next.getKey());
            next = ranges.ceilingEntry(from);
        }
        ranges.put(from, to);
    }

    boolean isEmpty() {
        return ranges.isEmpty();
    }

    void clear() {
        ranges.clear();
    }

    /** @return the ranges inside {@code [0, limit)} as bits */
    BitSet bits(int limit) {
        BitSet bits = new BitSet(limit);
        for (Map.Entry<Long, Long> range : ranges.entrySet()) {
            if (range.getKey() < limit) {
                bits.set((int) (long) range.getKey(), (int) Math.min(limit, range.getValue()));
            }
        }
        return bits;
    }

    Ranges copy() {
        Ranges copy = new Ranges();
        copy.ranges.putAll(ranges);
        return copy;
    }
}
