package dev.iomap.adapter.gfs2;

import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.util.Arrays;
import java.util.function.LongConsumer;

/**
 * A regular file's height-indexed tree: the dinode holds the top pointers, each indirect block
 * {@link Gfs2Layout#indirectPointers()} more, and a tree of height {@code h} addresses
 * {@link Gfs2Layout#heightBlocks(int)} blocks. Lookups walk the metapath (one index per level, GFS2's
 * {@code find_metapath}) and report the run of contiguous pointers inside one pointer block as one
 * mapping, with {@link Run#boundary()} where the run reaches the end of that block. Callers hold the
 * mount's metadata lock.
 */
final class FileTree {
    private final Gfs2Volume volume;
    private final Gfs2Layout layout;

    FileTree(Gfs2Volume volume) {
        this.volume = volume;
        this.layout = volume.layout;
    }

    /**
     * What a lookup found.
     *
     * @param block first file block
     * @param count blocks, at least 1
     * @param address first device block, or 0 for a hole
     * @param boundary whether the run ends at the end of its pointer block
     */
    record Run(long block, long count, long address, boolean boundary) {
        /** @return whether this is a hole */
        boolean hole() {
            return address == 0;
        }
    }

    /** @return blocks one pointer of the dinode of a tree of height {@code height} covers */
    private long topSpan(int height) {
        return height <= 1 ? 1 : layout.heightBlocks(height) / layout.dinodePointers();
    }

    /**
     * Looks up file block {@code block} of an unstuffed file.
     *
     * @param d the inode, height at least 1
     * @param block a file block
     * @param max the most blocks wanted, at least 1
     * @return the run of mapped blocks or the hole there, at most {@code max} blocks
     * @throws IOException if an indirect block cannot be read
     */
    Run lookup(Dinode d, long block, long max) throws IOException {
        if (d.height == 0 || block >= layout.heightBlocks(d.height)) {
            return new Run(block, max, 0, false);
        }
        long[] ptrs = d.pointers;
        long span = topSpan(d.height);
        long rel = block;
        for (int level = d.height; ; level--) {
            int idx = (int) (rel / span);
            if (ptrs[idx] == 0) {
                long count = span - rel % span;
                for (int i = idx + 1; i < ptrs.length && ptrs[i] == 0 && count < max; i++) {
                    count += span;
                }
                return new Run(block, Math.min(count, max), 0, false);
            }
            if (level == 1) {
                long count = 1;
                while (idx + count < ptrs.length && count < max && ptrs[idx + (int) count] == ptrs[idx] + count) {
                    count++;
                }
                return new Run(block, count, ptrs[idx], idx + count == ptrs.length);
            }
            ptrs = volume.indirect(ptrs[idx], d.ino).pointers;
            rel %= span;
            span /= layout.indirectPointers();
        }
    }

    /**
     * Allocates the hole at file block {@code block}: grows the height until the tree addresses
     * {@code block + max - 1} (GFS2 grows height, then depth, then data), allocates the missing
     * indirect blocks on the metapath, then a contiguous run of data blocks for the consecutive holes
     * of the last pointer block, from the inode's reservation.
     *
     * @param d the inode, height at least 1, with a hole at {@code block}
     * @param block the first file block to allocate
     * @param max the most blocks wanted
     * @return the new run
     * @throws NoSpaceException if the device is full
     * @throws IOException if an indirect block cannot be read
     */
    Run allocate(Dinode d, long block, long max) throws IOException {
        while (layout.heightBlocks(d.height) <= block + max - 1 && layout.heightBlocks(d.height) != Long.MAX_VALUE) {
            grow(d);
        }
        long[] ptrs = d.pointers;
        Indirect container = null;
        long span = topSpan(d.height);
        long rel = block;
        long near = d.ino;
        for (int level = d.height; level > 1; level--) {
            int idx = (int) (rel / span);
            if (ptrs[idx] == 0) {
                long b = volume.allocate(d.ino, near, 1, ResourceGroup.USED)[0];
                d.blocks++;
                ptrs[idx] = b;
                dirty(d, container);
                volume.newIndirect(b, d.ino, level - 1);
            }
            near = ptrs[idx];
            container = volume.indirect(ptrs[idx], d.ino);
            ptrs = container.pointers;
            rel %= span;
            span /= layout.indirectPointers();
        }
        int idx = (int) rel;
        int holes = 0;
        while (idx + holes < ptrs.length && holes < max && ptrs[idx + holes] == 0) {
            holes++;
        }
        long[] run = volume.allocate(d.ino, near, holes, ResourceGroup.USED);
        for (int i = 0; i < run[1]; i++) {
            ptrs[idx + i] = run[0] + i;
        }
        d.blocks += run[1];
        dirty(d, container);
        volume.dirtyDinode(d);
        return new Run(block, run[1], run[0], idx + run[1] == ptrs.length);
    }

    private void dirty(Dinode d, Indirect container) {
        if (container == null) {
            volume.dirtyDinode(d);
        } else {
            volume.dirtyIndirect(container);
        }
    }

    /** One level more: a new indirect block takes the dinode's pointers. */
    private void grow(Dinode d) throws NoSpaceException {
        boolean any = Arrays.stream(d.pointers).anyMatch(p -> p != 0);
        if (any) {
            long b = volume.allocate(d.ino, d.ino, 1, ResourceGroup.USED)[0];
            d.blocks++;
            Indirect top = volume.newIndirect(b, d.ino, d.height);
            System.arraycopy(d.pointers, 0, top.pointers, 0, d.pointers.length);
            Arrays.fill(d.pointers, 0);
            d.pointers[0] = b;
        }
        d.height++;
        volume.dirtyDinode(d);
    }

    /**
     * Frees every data block of file blocks {@code [from, to)} and every indirect block left empty.
     *
     * @param d the inode
     * @param from first file block
     * @param to first file block past the range ({@code Long.MAX_VALUE} for all)
     * @throws IOException if an indirect block cannot be read
     */
    void punch(Dinode d, long from, long to) throws IOException {
        punchStep(d, from, to, Long.MAX_VALUE);
    }

    /**
     * One step of a long punch: frees the blocks of {@code [from, to)} from the end down, until about
     * {@code budget} blocks were freed or dirtied, and leaves the tree consistent (GFS2's
     * {@code punch_hole} commits between such steps).
     *
     * @param d the inode
     * @param from first file block
     * @param to first file block past the range ({@code Long.MAX_VALUE} for all)
     * @param budget the most blocks (data and indirect) to free or dirty in this step, at least 1
     * @return the file block from which the whole range is now free: {@code from} when the punch is
     *     complete, larger when more steps are needed
     * @throws IOException if an indirect block cannot be read
     */
    long punchStep(Dinode d, long from, long to, long budget) throws IOException {
        if (d.height == 0 || from >= to) {
            return from;
        }
        Step step = new Step(budget);
        if (prune(d, d.pointers, d.height, 0, topSpan(d.height), from, to, step)) {
            volume.dirtyDinode(d);
        }
        return step.stoppedAt < 0 ? from : Math.max(from, step.stoppedAt);
    }

    /** The progress of one {@link #punchStep}. */
    private static final class Step {
        long left;
        long stoppedAt = -1;

        Step(long left) {
            this.left = left;
        }
    }

    /**
     * Frees the data blocks of {@code [from, to)} under {@code ptrs} (a tree level) and the indirect
     * blocks left empty, from the last pointer down, stopping when the step's budget runs out.
     *
     * @return whether {@code ptrs} changed
     */
    private boolean prune(Dinode d, long[] ptrs, int level, long base, long span, long from, long to, Step step)
            throws IOException {
        boolean changed = false;
        for (int i = ptrs.length - 1; i >= 0 && step.stoppedAt < 0; i--) {
            long start = base + i * span;
            if (ptrs[i] == 0 || start + span <= from || start >= to) {
                continue;
            }
            if (level == 1) {
                volume.free(ptrs[i]);
                d.blocks--;
                ptrs[i] = 0;
                changed = true;
                if (--step.left <= 0) {
                    step.stoppedAt = start;
                }
                continue;
            }
            Indirect child = volume.indirect(ptrs[i], d.ino);
            boolean childChanged = prune(d, child.pointers, level - 1, start, span / layout.indirectPointers(),
                    from, to, step);
            // An empty child goes even if this punch changed nothing in it: an indirect block allocated for a
            // write whose data blocks then could not be had (ENOSPC) never mapped anything.
            if (Arrays.stream(child.pointers).allMatch(p -> p == 0)) {
                volume.free(ptrs[i]);
                d.blocks--;
                ptrs[i] = 0;
                changed = true;
                step.left--;
            } else if (childChanged) {
                volume.dirtyIndirect(child);
                step.left--;
            }
        }
        return changed;
    }

    /**
     * Visits every block of the tree.
     *
     * @param d the inode
     * @param data called with each data block
     * @param indirect called with each indirect block
     * @throws IOException if an indirect block cannot be read
     */
    void walk(Dinode d, LongConsumer data, LongConsumer indirect) throws IOException {
        if (d.height > 0) {
            walk(d, d.pointers, d.height, data, indirect);
        }
    }

    private void walk(Dinode d, long[] ptrs, int level, LongConsumer data, LongConsumer indirect) throws IOException {
        for (long p : ptrs) {
            if (p == 0) {
                continue;
            }
            if (level == 1) {
                data.accept(p);
            } else {
                indirect.accept(p);
                walk(d, volume.indirect(p, d.ino).pointers, level - 1, data, indirect);
            }
        }
    }
}
