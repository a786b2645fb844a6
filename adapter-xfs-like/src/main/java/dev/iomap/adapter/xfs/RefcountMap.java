package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.CorruptFileSystemException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reference counts of the shared blocks of one allocation group, as XFS's refcount B-tree: only blocks
 * owned by two or more data-fork extents have a record; an owned block without one has count 1.
 * Records do not overlap, and neighbours that touch have different counts (the map is canonical).
 *
 * <p>Not thread-safe: used under the mount's metadata lock.
 */
final class RefcountMap {

    /**
     * Blocks {@code [start, start + length)} with {@code count} owners, at least 2.
     *
     * @param start first block
     * @param length blocks
     * @param count owners
     */
    @SuppressWarnings("AvoidCommonTypeNames") // always used as RefcountMap.Record in this package
    record Record(long start, long length, long count) {
        long end() {
            return start + length;
        }
    }

    /** What a change of counts did. */
    record Change(List<BlockRange> nowFree, List<BlockRange> nowSingle) {
    }

    private final TreeMap<Long, Record> records = new TreeMap<>();

    /** Adds a record read from the device (no merging; the loader checks overlaps). */
    void load(Record record) {
        records.put(record.start(), record);
    }

    /** @return the records in block order */
    List<Record> records() {
        return List.copyOf(records.values());
    }

    /** @return the records overlapping {@code [start, end)}, clipped to it */
    List<Record> recordsIn(long start, long end) {
        List<Record> result = new ArrayList<>();
        for (Record record : overlapping(start, end)) {
            long from = Math.max(start, record.start());
            long to = Math.min(end, record.end());
            result.add(new Record(from, to - from, record.count()));
        }
        return result;
    }

    /** @return the first block of the record holding {@code block}, or {@code otherwise} if none does */
    long recordStart(long block, long otherwise) {
        Map.Entry<Long, Record> entry = records.floorEntry(block);
        return entry != null && entry.getValue().end() > block ? entry.getKey() : otherwise;
    }

    /** @return the number of records */
    int size() {
        return records.size();
    }

    /**
     * Adds one owner to every block of the range (a clone).
     *
     * @param start first block
     * @param length blocks, all owned by at least one extent
     */
    void increment(long start, long length) {
        adjust(start, length, +1);
    }

    /**
     * Removes one owner from every block of the range. A record below 2 owners (which no loaded or
     * computed map holds) would make a count negative: nothing changes and the caller is told.
     *
     * @param start first block
     * @param length blocks, all owned
     * @return the blocks that have no owner left (to free) and those with exactly one (no longer shared)
     * @throws CorruptFileSystemException if a record over the range counts fewer than 2 owners
     */
    Change decrement(long start, long length) throws CorruptFileSystemException {
        for (Record record : overlapping(start, start + length)) {
            if (record.count() < 2) {
                throw new CorruptFileSystemException("the reference count record of blocks [" + record.start() + ", "
                        + record.end() + ") says " + record.count() + " owners; removing one would leave "
                        + (record.count() - 1));
            }
        }
        return adjust(start, length, -1);
    }

    private Change adjust(long start, long length, int delta) {
        long end = start + length;
        List<BlockRange> nowFree = new ArrayList<>();
        List<BlockRange> nowSingle = new ArrayList<>();
        List<Record> updated = new ArrayList<>();
        long next = start;
        for (Record record : overlapping(start, end)) {
            records.remove(record.start());
            if (record.start() < start) {
                updated.add(new Record(record.start(), start - record.start(), record.count()));
            }
            if (record.end() > end) {
                updated.add(new Record(end, record.end() - end, record.count()));
            }
            long from = Math.max(start, record.start());
            long to = Math.min(end, record.end());
            if (from > next) {
                apply(next, from, 1 + delta, updated, nowFree, nowSingle);
            }
            apply(from, to, record.count() + delta, updated, nowFree, nowSingle);
            next = to;
        }
        if (next < end) {
            apply(next, end, 1 + delta, updated, nowFree, nowSingle);
        }
        for (Record record : updated) {
            records.put(record.start(), record);
        }
        mergeAround(start, end);
        return new Change(nowFree, nowSingle);
    }

    private static void apply(long from, long to, long count, List<Record> updated, List<BlockRange> nowFree,
            List<BlockRange> nowSingle) {
        if (count >= 2) {
            updated.add(new Record(from, to - from, count));
        } else if (count == 1) {
            nowSingle.add(new BlockRange(from, to - from));
        } else {
            // 0: decrement refuses records below 2, so no count goes below 0.
            nowFree.add(new BlockRange(from, to - from));
        }
    }

    /** Merges touching records of equal count around {@code [start, end]}. */
    private void mergeAround(long start, long end) {
        Map.Entry<Long, Record> entry = records.floorEntry(start - 1);
        long key = entry != null ? entry.getKey() : start;
        while (true) {
            Map.Entry<Long, Record> current = records.ceilingEntry(key);
            if (current == null || current.getKey() > end) {
                return;
            }
            Record record = current.getValue();
            Record next = records.get(record.end());
            if (next != null && next.count() == record.count()) {
                records.remove(next.start());
                records.put(record.start(), new Record(record.start(), record.length() + next.length(),
                        record.count()));
                key = record.start();
            } else {
                key = record.start() + 1;
            }
        }
    }

    private List<Record> overlapping(long start, long end) {
        List<Record> result = new ArrayList<>();
        Map.Entry<Long, Record> before = records.lowerEntry(start);
        if (before != null && before.getValue().end() > start) {
            result.add(before.getValue());
        }
        result.addAll(records.subMap(start, true, end, false).values());
        return result;
    }
}
