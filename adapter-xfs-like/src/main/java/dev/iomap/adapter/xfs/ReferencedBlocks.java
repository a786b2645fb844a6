package dev.iomap.adapter.xfs;

import java.util.Map;
import java.util.TreeMap;

/**
 * The blocks inodes reference, as disjoint runs: built at mount from every inode's extents, extent-list
 * blocks and chains (independently of the free-space metadata), grown by each allocation and shrunk by
 * each free. {@link XfsVolume#allocate} asks it whether blocks the free space hands out are referenced, in
 * O(log runs), instead of walking every inode of the filesystem per allocation (that walk made
 * write-back of many small files quadratic: 10,000 one-block files spent most of their write-back in
 * it). A block shared by several inodes is one run; it leaves when its last reference is freed.
 *
 * <p>Guarded by the volume's metadata lock, as allocation and freeing are.
 */
final class ReferencedBlocks {
    /** Start block to end block (exclusive) of each run; runs neither overlap nor touch. */
    private final TreeMap<Long, Long> runs = new TreeMap<>();

    /** Adds {@code [start, start + length)}, merging with the runs it overlaps or touches. */
    void add(long start, long length) {
        if (length <= 0) {
            return;
        }
        long from = start;
        long to = start + length;
        Map.Entry<Long, Long> before = runs.floorEntry(from);
        if (before != null && before.getValue() >= from) {
            from = before.getKey();
            to = Math.max(to, before.getValue());
        }
        Map.Entry<Long, Long> next = runs.ceilingEntry(from);
        while (next != null && next.getKey() <= to) {
            to = Math.max(to, next.getValue());
            runs.remove(next.getKey());
            next = runs.ceilingEntry(from);
        }
        runs.put(from, to);
    }

    /** Removes {@code [start, start + length)}, splitting the runs it cuts. */
    void remove(long start, long length) {
        if (length <= 0) {
            return;
        }
        long end = start + length;
        Map.Entry<Long, Long> run = runs.lowerEntry(end);
        while (run != null && run.getValue() > start) {
            long runStart = run.getKey();
            long runEnd = run.getValue();
            runs.remove(runStart);
            if (runStart < start) {
                runs.put(runStart, start);
            }
            if (runEnd > end) {
                runs.put(end, runEnd);
            }
            run = runs.lowerEntry(Math.min(runStart, end));
        }
    }

    /** @return whether any block of {@code [start, end)} is in a run */
    boolean intersects(long start, long end) {
        Map.Entry<Long, Long> run = runs.lowerEntry(end);
        return run != null && run.getValue() > start;
    }

    /** @return the number of runs (for tests) */
    int runCount() {
        return runs.size();
    }
}
