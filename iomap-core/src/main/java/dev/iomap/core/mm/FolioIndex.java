package dev.iomap.core.mm;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The folios of one inode by page index, with two marks per index: a radix tree of 64-way nodes, the
 * kernel's {@code struct xarray} as an {@code address_space}'s {@code i_pages} uses it
 * ({@code filemap_get_folio}, {@code filemap_get_folios}, {@code filemap_get_folios_tag},
 * {@code xa_set_mark}/{@code xa_clear_mark} with {@code PAGECACHE_TAG_DIRTY} and
 * {@code PAGECACHE_TAG_WRITEBACK}).
 *
 * <p>Keys are page indices from 0 to {@link Long#MAX_VALUE}. The tree starts as one leaf covering
 * indices 0 to 63 and grows a level (six more bits of index) on demand, up to eleven levels for the
 * whole range; it shrinks back when the top node only has its first slot, and a node that holds no
 * folio and no mark is unlinked at once, so a file truncated and cached again does not leave empty
 * nodes behind.
 *
 * <p>A folio of {@code 2^order} pages is stored in each of the {@code 2^order} leaf slots it covers,
 * so any of its pages finds it in one walk from the top (a lookup never has to look left as a sorted
 * map's floor search does). This is where it differs from the xarray, which keeps a large entry once
 * in the slot of the level that matches its order and fills the other slots it covers with sibling
 * entries: here every entry lives in a leaf, a lookup always walks the full height, and inserting or
 * removing a folio of order {@code n} writes {@code 2^n} slots.
 *
 * <p>Marks are independent of the folios: a mark is set and cleared on one page index (the folio's
 * first, by convention of {@link PageCache}), may outlive the folio at that index, and keeps its
 * leaf alive. Each node has one 64-bit bitmap per mark; in a leaf a bit says that index is marked,
 * in an inner node that some index below that slot is, so {@link #nextMarked} skips unmarked
 * subtrees as the xarray's {@code xas_find_marked} does.
 *
 * <p>Thread-safety: readers ({@link #get}, {@link #findFrom}, {@link #collect}, {@link #nextMarked},
 * the counts) take no lock. Every slot, bitmap and the top node are published with release stores
 * and read with acquire loads, and a node is fully built before it is linked, so a reader sees each
 * slot either before or after a change, never a partly built node, and a folio it finds always covers
 * the index it was found at. Writers ({@link #insert}, {@link #remove}, {@link #setMark},
 * {@link #clearMark}) serialize on a lock of the index (the kernel's {@code xa_lock}); callers may
 * hold their own locks around them, since this lock is always the innermost and nothing is called
 * while it is held. Walks that span several slots are weakly consistent, like a concurrent
 * collection's iterator: they see every entry present for their whole duration, and may or may not
 * see entries added or removed meanwhile. In particular, a mark set before {@link #nextMarked} is
 * called and not cleared before the walk passes its index is always found: a node is unlinked only
 * once it holds no folio and no mark, and unlinked nodes are never reused.
 */
final class FolioIndex {
    /** The dirty mark (the kernel's {@code PAGECACHE_TAG_DIRTY}). */
    static final int DIRTY = 0;
    /** The writeback mark (the kernel's {@code PAGECACHE_TAG_WRITEBACK}). */
    static final int WRITEBACK = 1;
    private static final int MARKS = 2;

    private static final int BITS = 6;
    private static final int FANOUT = 1 << BITS;
    private static final int MASK = FANOUT - 1;

    private static final VarHandle NODE_SLOT = MethodHandles.arrayElementVarHandle(Node[].class);
    private static final VarHandle FOLIO_SLOT = MethodHandles.arrayElementVarHandle(Folio[].class);
    private static final VarHandle LONG_SLOT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle DIRTY_MARKS;
    private static final VarHandle WRITEBACK_MARKS;

    static {
        try {
            DIRTY_MARKS = MethodHandles.lookup().findVarHandle(Node.class, "dirtyMarks", long.class);
            WRITEBACK_MARKS = MethodHandles.lookup().findVarHandle(Node.class, "writebackMarks", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** One node: 64 slots of children (inner node) or folios (leaf), and a bitmap per mark. */
    private static final class Node {
        /** First index under this node. */
        final long base;
        /** Log2 of the indices under one slot: 0 for a leaf. */
        final int shift;
        /** Last index under this node. */
        final long last;
        /** Children, for an inner node; null in a leaf. */
        final Node[] children;
        /** Folios, for a leaf; null in an inner node. */
        final Folio[] folios;
        /**
         * The bitmap of each mark, bit i for slot i: fields rather than an array, so a tag change does
         * not load one more object. Written under the lock with release stores.
         */
        long dirtyMarks;
        long writebackMarks;
        /** Writer-only, under the lock: the node above (null at the top) and this node's slot in it. */
        Node parent;
        int offset;
        /** Writer-only, under the lock: non-null slots. */
        int count;

        Node(long base, int shift) {
            this.base = base;
            this.shift = shift;
            this.last = shift + BITS >= Long.SIZE - 1 ? Long.MAX_VALUE : base + (((long) FANOUT << shift) - 1);
            this.children = shift == 0 ? null : new Node[FANOUT];
            this.folios = shift == 0 ? new Folio[FANOUT] : null;
        }

        int slotOf(long index) {
            return (int) ((index - base) >>> shift) & MASK;
        }

        long slotBase(int slot) {
            return base + ((long) slot << shift);
        }

        Node child(int slot) {
            return (Node) NODE_SLOT.getAcquire(children, slot);
        }

        Folio folio(int slot) {
            return (Folio) FOLIO_SLOT.getAcquire(folios, slot);
        }

        /** The bitmap of {@code mark}, for a reader. */
        long marks(int mark) {
            return mark == DIRTY ? (long) DIRTY_MARKS.getAcquire(this) : (long) WRITEBACK_MARKS.getAcquire(this);
        }

        /** The bitmap of {@code mark}, for a writer. Under the lock. */
        long marksLocked(int mark) {
            return mark == DIRTY ? dirtyMarks : writebackMarks;
        }

        /** Publishes the bitmap of {@code mark}. Under the lock. */
        void setMarks(int mark, long bits) {
            if (mark == DIRTY) {
                DIRTY_MARKS.setRelease(this, bits);
            } else {
                WRITEBACK_MARKS.setRelease(this, bits);
            }
        }

        boolean isEmpty() {
            return count == 0 && dirtyMarks == 0 && writebackMarks == 0;
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    /** The top node, null when the index is empty; its {@code base} is always 0. */
    private volatile Node root;
    /**
     * Indices marked with each mark, then folios stored (slot {@link #FOLIOS}): written under the
     * lock, read without it.
     */
    private final long[] counts = new long[MARKS + 1];
    private static final int FOLIOS = MARKS;

    /**
     * The folio stored at a page index: the folio covering it (the kernel's {@code filemap_get_folio}
     * without the reference).
     *
     * @param index page index; a negative one is never present
     * @return the folio, or null
     */
    Folio get(long index) {
        Node node = root;
        if (node == null || index < 0 || index > node.last) {
            return null;
        }
        int shift;
        while ((shift = node.shift) != 0) {
            node = node.child((int) (index >>> shift) & MASK);
            if (node == null) {
                return null;
            }
        }
        return node.folio((int) index & MASK);
    }

    /**
     * The folio stored at the first present index at or after {@code index}: the one covering
     * {@code index} if any, else the first folio after it (the kernel's {@code xa_find}).
     *
     * @param index page index, at least 0
     * @return the folio, or null if no index at or after {@code index} is present
     */
    Folio findFrom(long index) {
        Node node = root;
        if (node == null || index < 0 || index > node.last) {
            return null;
        }
        return findFrom(node, index);
    }

    private static Folio findFrom(Node node, long from) {
        if (node.shift == 0) {
            for (int slot = node.slotOf(from); slot < FANOUT; slot++) {
                Folio folio = node.folio(slot);
                if (folio != null) {
                    return folio;
                }
            }
            return null;
        }
        for (int slot = node.slotOf(from); slot < FANOUT; slot++) {
            Node child = node.child(slot);
            if (child != null) {
                Folio folio = findFrom(child, Math.max(from, child.base));
                if (folio != null) {
                    return folio;
                }
            }
        }
        return null;
    }

    /**
     * Adds to {@code out}, in index order, the folios stored at any index of {@code [first, last]}
     * (the kernel's {@code filemap_get_folios}). Weakly consistent: every folio stored for the whole
     * walk is added; one inserted or removed meanwhile may or may not be. The folios added never
     * overlap and each is added once: a folio found over pages of one already added (the earlier
     * one was removed and the later one inserted while the walk passed) is left out.
     *
     * @param first first page index
     * @param last last page index, inclusive
     * @param out where the folios go
     */
    void collect(long first, long last, List<Folio> out) {
        Node node = root;
        if (node == null || first < 0 || first > node.last || last < first) {
            return;
        }
        collect(node, first, Math.min(last, node.last), out, out.size());
    }

    /**
     * Collects from {@code node}, from {@code from} to {@code last}, both inside the node.
     *
     * @param start the size of {@code out} before the walk began
     * @return the last index looked at: at least {@code last} or the last page of the last folio
     *     found, whichever is larger
     */
    private static long collect(Node node, long from, long last, List<Folio> out, int start) {
        int end = node.slotOf(last);
        if (node.shift == 0) {
            for (int slot = node.slotOf(from); slot <= end; slot++) {
                Folio folio = node.folio(slot);
                if (folio != null) {
                    if (out.size() == start || folio.index() > lastPage(out.getLast())) {
                        out.add(folio);
                    }
                    // The folio covers this slot: skip the rest of its slots.
                    long folioLast = lastPage(folio);
                    if (folioLast >= node.base + end) {
                        return folioLast;
                    }
                    slot = (int) (folioLast - node.base);
                }
            }
            return node.base + end;
        }
        for (int slot = node.slotOf(from); slot <= end; slot++) {
            long slotLast = node.slotBase(slot) + ((1L << node.shift) - 1);
            if (from > slotLast) {
                continue; // covered by a folio already added
            }
            Node child = node.child(slot);
            long done = child == null ? slotLast
                    : collect(child, Math.max(from, child.base), Math.min(last, child.last), out, start);
            if (done >= last) {
                return done;
            }
            from = done + 1;
        }
        return last;
    }

    private static long lastPage(Folio folio) {
        return folio.index() + ((1L << folio.order()) - 1);
    }

    /**
     * The first index at or after {@code from}, and at most {@code last}, carrying {@code mark} (the
     * kernel's {@code xas_find_marked}); unmarked subtrees are skipped.
     *
     * @param mark {@link #DIRTY} or {@link #WRITEBACK}
     * @param from first page index; a negative one (the step past {@link Long#MAX_VALUE}) or one past
     *     {@code last} finds nothing
     * @param last last page index, inclusive
     * @return the index, or -1 if none is marked
     */
    long nextMarked(int mark, long from, long last) {
        Node node = root;
        if (node == null || from < 0 || from > node.last || last < from) {
            return -1;
        }
        return nextMarked(node, mark, from, Math.min(last, node.last));
    }

    private static long nextMarked(Node node, int mark, long from, long last) {
        int start = node.slotOf(from);
        int end = node.slotOf(last);
        long bits = node.marks(mark) & (-1L << start);
        if (end < MASK) {
            bits &= (1L << (end + 1)) - 1;
        }
        if (node.shift == 0) {
            return bits == 0 ? -1 : node.base + Long.numberOfTrailingZeros(bits);
        }
        while (bits != 0) {
            int slot = Long.numberOfTrailingZeros(bits);
            Node child = node.child(slot);
            if (child != null) {
                long found = nextMarked(child, mark, Math.max(from, child.base), Math.min(last, child.last));
                if (found >= 0) {
                    return found;
                }
            }
            bits &= bits - 1;
        }
        return -1;
    }

    /**
     * Whether {@code index} carries {@code mark} (the kernel's {@code xa_get_mark}).
     *
     * @param mark {@link #DIRTY} or {@link #WRITEBACK}
     * @param index page index
     * @return whether it is marked
     */
    boolean isMarked(int mark, long index) {
        Node node = root;
        if (node == null || index < 0 || index > node.last) {
            return false;
        }
        while (node.shift != 0) {
            node = node.child((int) (index >>> node.shift) & MASK);
            if (node == null) {
                return false;
            }
        }
        return (node.marks(mark) & (1L << (index & MASK))) != 0;
    }

    /** @return folios stored, each counted once */
    int folioCount() {
        return (int) (long) LONG_SLOT.getVolatile(counts, FOLIOS);
    }

    /**
     * @param mark {@link #DIRTY} or {@link #WRITEBACK}
     * @return indices carrying {@code mark}
     */
    long markCount(int mark) {
        return (long) LONG_SLOT.getVolatile(counts, mark);
    }

    /** @return levels of nodes, 0 when empty (for tests) */
    int height() {
        Node node = root;
        return node == null ? 0 : node.shift / BITS + 1;
    }

    /** @return nodes reachable from the top (for tests; walks the whole tree) */
    int nodeCount() {
        lock.lock();
        try {
            return root == null ? 0 : countNodes(root);
        } finally {
            lock.unlock();
        }
    }

    private static int countNodes(Node node) {
        int nodes = 1;
        if (node.shift != 0) {
            for (Node child : node.children) {
                if (child != null) {
                    nodes += countNodes(child);
                }
            }
        }
        return nodes;
    }

    /**
     * Stores {@code folio} at every index it covers, {@code [folio.index(), folio.index() + 2^order)}.
     *
     * @param folio a folio whose index is a non-negative multiple of {@code 2^order}
     * @throws IllegalStateException if any of those indices is already present (nothing is stored)
     */
    void insert(Folio folio) {
        long first = folio.index();
        long pages = 1L << folio.order();
        if (first < 0 || (first & (pages - 1)) != 0 || first + pages - 1 < first) {
            throw new IllegalArgumentException("misaligned or out-of-range folio " + folio);
        }
        lock.lock();
        try {
            // Counting pages, not comparing with an end: a folio ending at the top has no end index.
            for (long page = 0; page < pages; page++) {
                Folio there = get(first + page);
                if (there != null) {
                    throw new IllegalStateException("index " + (first + page) + " already holds " + there
                            + "; cannot insert " + folio);
                }
            }
            for (long page = 0; page < pages; ) {
                Node leaf = leafFor(first + page);
                int slot = (int) (first + page) & MASK;
                int stop = (int) Math.min(FANOUT, slot + (pages - page));
                for (int s = slot; s < stop; s++) {
                    FOLIO_SLOT.setRelease(leaf.folios, s, folio);
                }
                leaf.count += stop - slot;
                page += stop - slot;
            }
            count(FOLIOS, 1);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes {@code folio} from every index it covers, if it is the folio stored at its first index;
     * marks stay.
     *
     * @param folio the folio
     * @return whether it was stored (and now is not)
     */
    boolean remove(Folio folio) {
        long first = folio.index();
        long pages = 1L << folio.order();
        lock.lock();
        try {
            if (get(first) != folio) {
                return false;
            }
            for (long page = 0; page < pages; ) {
                Node leaf = existingLeaf(first + page);
                int slot = (int) (first + page) & MASK;
                int stop = (int) Math.min(FANOUT, slot + (pages - page));
                if (leaf != null) {
                    for (int s = slot; s < stop; s++) {
                        if (leaf.folios[s] == folio) {
                            FOLIO_SLOT.setRelease(leaf.folios, s, (Folio) null);
                            leaf.count--;
                        }
                    }
                    pruneUpward(leaf);
                }
                page += stop - slot;
            }
            count(FOLIOS, -1);
            shrink();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sets {@code mark} on {@code index} (the kernel's {@code xa_set_mark}).
     *
     * @param mark {@link #DIRTY} or {@link #WRITEBACK}
     * @param index page index, at least 0
     * @return whether the mark was not set before
     */
    boolean setMark(int mark, long index) {
        if (index < 0) {
            throw new IllegalArgumentException("negative index " + index);
        }
        lock.lock();
        try {
            Node node = leafFor(index);
            int slot = (int) index & MASK;
            long bits = node.marksLocked(mark);
            if ((bits & (1L << slot)) != 0) {
                return false;
            }
            // Leaf first, then the summaries above it: a walk that sees a summary bit finds the leaf's.
            while (true) {
                node.setMarks(mark, bits | (1L << slot));
                if (bits != 0 || node.parent == null) {
                    break; // the summaries above were already set
                }
                slot = node.offset;
                node = node.parent;
                bits = node.marksLocked(mark);
            }
            count(mark, 1);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Clears {@code mark} on {@code index} (the kernel's {@code xa_clear_mark}); a leaf left with no
     * folio and no mark is unlinked.
     *
     * @param mark {@link #DIRTY} or {@link #WRITEBACK}
     * @param index page index
     * @return whether the mark was set before
     */
    boolean clearMark(int mark, long index) {
        lock.lock();
        try {
            Node leaf = existingLeaf(index);
            if (leaf == null) {
                return false;
            }
            int slot = (int) index & MASK;
            if ((leaf.marksLocked(mark) & (1L << slot)) == 0) {
                return false;
            }
            Node node = leaf;
            while (node != null) {
                long bits = node.marksLocked(mark) & ~(1L << slot);
                node.setMarks(mark, bits);
                if (bits != 0) {
                    break; // something else below the summaries above is still marked
                }
                slot = node.offset;
                node = node.parent;
            }
            count(mark, -1);
            pruneUpward(leaf);
            shrink();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Adds {@code delta} to one of {@link #counts}. Under the lock. */
    private void count(int which, long delta) {
        LONG_SLOT.setVolatile(counts, which, counts[which] + delta);
    }

    /** The leaf for {@code index}, grown and built as needed. Under the lock. */
    private Node leafFor(long index) {
        Node node = root;
        if (node == null) {
            // As tall as the index needs at once: an empty node below would never be unlinked.
            int shift = 0;
            while (shift + BITS < Long.SIZE - 1 && (index >>> (shift + BITS)) != 0) {
                shift += BITS;
            }
            node = new Node(0, shift);
            root = node;
        }
        while (index > node.last) {
            Node up = new Node(0, node.shift + BITS);
            up.children[0] = node;
            up.count = 1;
            for (int mark = 0; mark < MARKS; mark++) {
                up.setMarks(mark, node.marksLocked(mark) != 0 ? 1L : 0L);
            }
            node.parent = up;
            node.offset = 0;
            root = up;
            node = up;
        }
        while (node.shift != 0) {
            int slot = node.slotOf(index);
            Node child = node.children[slot];
            if (child == null) {
                child = new Node(node.slotBase(slot), node.shift - BITS);
                child.parent = node;
                child.offset = slot;
                NODE_SLOT.setRelease(node.children, slot, child);
                node.count++;
            }
            node = child;
        }
        return node;
    }

    /** The leaf for {@code index} if it exists. Under the lock. */
    private Node existingLeaf(long index) {
        Node node = root;
        if (node == null || index < 0 || index > node.last) {
            return null;
        }
        while (node != null && node.shift != 0) {
            node = node.children[node.slotOf(index)];
        }
        return node;
    }

    /** Unlinks {@code node} and then each node above it that is left empty. Under the lock. */
    private void pruneUpward(Node node) {
        while (node != null && node.isEmpty()) {
            Node parent = node.parent;
            if (parent == null) {
                root = null;
                return;
            }
            NODE_SLOT.setRelease(parent.children, node.offset, (Node) null);
            parent.count--;
            node = parent;
        }
    }

    /**
     * Drops top nodes whose only child is in slot 0 (the kernel's {@code xas_shrink}). The old top
     * keeps pointing at its child, so a walk that started from it still finds everything. Under the lock.
     */
    private void shrink() {
        Node top = root;
        while (top != null && top.shift != 0 && top.count == 1 && top.children[0] != null) {
            Node child = top.children[0];
            child.parent = null;
            root = child;
            top = child;
        }
    }
}
