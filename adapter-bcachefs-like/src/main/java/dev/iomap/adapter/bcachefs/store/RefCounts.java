package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.CorruptFileSystemException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Reference counts of data blocks as runs of equal, non-zero counts (absent blocks have count 0), in
 * memory, mirroring the allocation tree (btree 0): key {@code (0, start, 0)}, value length (8) and
 * count (4), little-endian. Adjacent runs with equal counts are always merged, so the runs, and with
 * them the tree's keys, are a function of the counts. Not thread-safe.
 */
final class RefCounts {
    /** Btree id of the allocation tree. */
    static final int BTREE = 0;
    /** Bytes of a run's value. */
    static final int VALUE_BYTES = 12;

    private record Run(long start, long length, int count) {
        long end() {
            return start + length;
        }
    }

    /** What a reference change did: the tree ops mirroring it and the blocks whose count fell to 0. */
    record Change(List<StoreOp> treeOps, List<BlockRange> zeroed) {
    }

    private final TreeMap<Long, Run> runs = new TreeMap<>();

    static BKey key(long start) {
        return new BKey(BTREE, start, 0);
    }

    static byte[] value(long length, int count) {
        return ByteBuffer.allocate(VALUE_BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(length).putInt(count)
                .array();
    }

    /** @return the run a key of the allocation tree describes */
    static RefRun decode(BKey key, byte[] value, String where) throws CorruptFileSystemException {
        if (value.length != VALUE_BYTES || key.offset() != 0) {
            throw new CorruptFileSystemException(where + ": allocation key " + key + " is malformed");
        }
        ByteBuffer buf = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        long length = buf.getLong();
        int count = buf.getInt();
        if (key.inode() < 0 || length < 1 || count < 1 || key.inode() > Long.MAX_VALUE - length) {
            throw new CorruptFileSystemException(where + ": allocation key " + key + " has run of " + length
                    + " blocks with count " + count);
        }
        return new RefRun(new BlockRange(key.inode(), length), count);
    }

    /** Adds a run read from the tree, in ascending order, without merging. */
    void load(RefRun run) throws CorruptFileSystemException {
        Map.Entry<Long, Run> last = runs.lastEntry();
        if (last != null && last.getValue().end() > run.blocks().start()) {
            throw new CorruptFileSystemException("allocation runs overlap at block " + run.blocks().start());
        }
        runs.put(run.blocks().start(), new Run(run.blocks().start(), run.blocks().length(), run.count()));
    }

    int count(long block) {
        Map.Entry<Long, Run> e = runs.floorEntry(block);
        return e != null && e.getValue().end() > block ? e.getValue().count() : 0;
    }

    List<RefRun> runs() {
        List<RefRun> out = new ArrayList<>(runs.size());
        for (Run run : runs.values()) {
            out.add(new RefRun(new BlockRange(run.start(), run.length()), run.count()));
        }
        return out;
    }

    /** @return the blocks of {@code range} with count 0 now, as runs */
    List<BlockRange> zeroIn(BlockRange range) {
        List<BlockRange> out = new ArrayList<>();
        long at = range.start();
        Map.Entry<Long, Run> before = runs.floorEntry(at);
        if (before != null && before.getValue().end() > at) {
            at = before.getValue().end();
        }
        if (at >= range.end()) {
            return out;
        }
        for (Run run : runs.subMap(at, true, range.end(), false).values()) {
            if (run.start() > at) {
                out.add(new BlockRange(at, run.start() - at));
            }
            at = run.end();
        }
        if (at < range.end()) {
            out.add(new BlockRange(at, range.end() - at));
        }
        return out;
    }

    /** @return a copy holding only the runs touching {@code ops}' ranges (to try a transaction on) */
    RefCounts copyTouching(List<StoreOp.AddRefs> ops) {
        RefCounts copy = new RefCounts();
        for (StoreOp.AddRefs op : ops) {
            for (Run run : touching(op.start(), op.start() + op.length())) {
                copy.runs.put(run.start(), run);
            }
        }
        return copy;
    }

    private List<Run> touching(long start, long end) {
        List<Run> out = new ArrayList<>();
        Map.Entry<Long, Run> before = runs.lowerEntry(start);
        long from = before != null && before.getValue().end() >= start ? before.getKey() : start;
        out.addAll(runs.subMap(from, true, end, true).values());
        return out;
    }

    /**
     * Adds {@code delta} to the count of every block of {@code [start, start + length)}.
     *
     * @return the tree ops that make btree 0 match, and the blocks that fell to count 0
     * @throws CorruptFileSystemException if a count would go below 0 (nothing changes then)
     */
    Change apply(long start, long length, int delta) throws CorruptFileSystemException {
        long end = start + length;
        List<Run> old = touching(start, end);
        TreeSet<Long> cuts = new TreeSet<>(List.of(start, end));
        for (Run run : old) {
            cuts.add(run.start());
            cuts.add(run.end());
        }
        List<Run> fresh = new ArrayList<>();
        List<BlockRange> zeroed = new ArrayList<>();
        int oldIndex = 0;
        Long a = cuts.first();
        for (Long b = cuts.higher(a); b != null; a = b, b = cuts.higher(b)) {
            while (oldIndex < old.size() && old.get(oldIndex).end() <= a) {
                oldIndex++;
            }
            int before = oldIndex < old.size() && old.get(oldIndex).start() <= a ? old.get(oldIndex).count() : 0;
            boolean inside = a >= start && a < end;
            int after = inside ? before + delta : before;
            if (after < 0) {
                throw new CorruptFileSystemException("reference count of blocks [" + a + ", " + b
                        + ") would drop below 0");
            }
            if (inside && before > 0 && after == 0) {
                zeroed.add(new BlockRange(a, b - a));
            }
            if (after == 0) {
                continue;
            }
            Run last = fresh.isEmpty() ? null : fresh.getLast();
            if (last != null && last.end() == a && last.count() == after) {
                fresh.set(fresh.size() - 1, new Run(last.start(), last.length() + b - a, after));
            } else {
                fresh.add(new Run(a, b - a, after));
            }
        }
        List<StoreOp> ops = new ArrayList<>();
        for (Run run : old) {
            runs.remove(run.start());
            if (fresh.stream().noneMatch(f -> f.start() == run.start())) {
                ops.add(new StoreOp.Delete(key(run.start())));
            }
        }
        for (Run run : fresh) {
            runs.put(run.start(), run);
            if (!old.contains(run)) {
                ops.add(new StoreOp.Put(key(run.start()), value(run.length(), run.count())));
            }
        }
        return new Change(ops, mergeAdjacent(zeroed));
    }

    private static List<BlockRange> mergeAdjacent(List<BlockRange> ranges) {
        List<BlockRange> out = new ArrayList<>();
        for (BlockRange r : ranges) {
            if (!out.isEmpty() && out.getLast().end() == r.start()) {
                out.set(out.size() - 1, new BlockRange(out.getLast().start(), out.getLast().length() + r.length()));
            } else {
                out.add(r);
            }
        }
        return out;
    }
}
