package dev.iomap.adapter.bcachefs.store;

import dev.iomap.api.CorruptFileSystemException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The in-memory copy-on-write B-tree over all keys (ordered by btree id first): nodes are loaded from
 * the device on first use and verified; every node a change touches, and every node above it, is
 * marked dirty and written to a new block by the next checkpoint. Leaves split when their entries no
 * longer fit a block; an emptied node is removed from its parent and an underfull leaf merges with a
 * loaded neighbour. Not thread-safe: the store's lock guards it.
 */
final class Tree {
    /** Loads a node from the device, verified. */
    interface NodeReader {
        Node read(long block, int level) throws IOException;
    }

    private final NodeReader reader;
    private final int capacity;
    private Node root;
    private int dirtyCount;
    /** Blocks of nodes removed from the tree since the last checkpoint. */
    private final List<Long> orphanedBlocks = new ArrayList<>();

    Tree(NodeReader reader, int blockSize, Node root) {
        this.reader = reader;
        this.capacity = blockSize - Node.HEADER_BYTES;
        this.root = root;
    }

    Node root() {
        return root;
    }

    int dirtyCount() {
        return dirtyCount;
    }

    List<Long> orphanedBlocks() {
        return orphanedBlocks;
    }

    /**
     * Bounds memory: if more than {@code limit} leaves are loaded, unloads every clean leaf (they are
     * read again, and verified, when next needed). Called when nothing is dirty, after a checkpoint.
     *
     * @return leaves unloaded
     */
    int evictLeaves(int limit) {
        List<Node> bottom = new ArrayList<>();
        collectBottom(root, bottom);
        int loaded = 0;
        for (Node parent : bottom) {
            loaded += parent.loadedChildren().size();
        }
        if (loaded <= limit) {
            return 0;
        }
        int evicted = 0;
        for (Node parent : bottom) {
            for (int i = 0; i < parent.size(); i++) {
                Node leaf = parent.children.get(i);
                if (leaf != null && !leaf.dirty && leaf.block >= 0) {
                    parent.childBlocks.set(i, leaf.block);
                    parent.children.set(i, null);
                    evicted++;
                }
            }
        }
        return evicted;
    }

    /** Collects the loaded level-1 nodes. */
    private static void collectBottom(Node node, List<Node> out) {
        if (node.level == 1) {
            out.add(node);
        } else if (node.level > 1) {
            for (Node child : node.loadedChildren()) {
                collectBottom(child, out);
            }
        }
    }

    /** After a checkpoint wrote every dirty node: nothing is dirty or orphaned. */
    void checkpointed() {
        dirtyCount = 0;
        orphanedBlocks.clear();
    }

    /**
     * @param node an internal node
     * @param i a child index
     * @param range the keys {@code node} may hold
     * @return child {@code i} of {@code node}, loading it: a child read from the device is checked against
     *     the range {@code node} gives it
     * @throws CorruptFileSystemException if the child fails its own checks or holds a key outside its range
     */
    Node child(Node node, int i, KeyRange range) throws IOException {
        Node child = node.children.get(i);
        if (child == null) {
            child = reader.read(node.childBlocks.get(i), node.level - 1);
            range.child(node, i).check(child);
            node.children.set(i, child);
        }
        return child;
    }

    byte[] get(BKey key) throws IOException {
        Node leaf = leafOf(key);
        int i = leaf.search(key);
        return i >= 0 ? leaf.values.get(i) : null;
    }

    /** @return the leaf whose range holds {@code key}, loading the path to it */
    private Node leafOf(BKey key) throws IOException {
        Node node = root;
        KeyRange range = KeyRange.ALL;
        while (!node.isLeaf()) {
            int i = node.childIndex(key);
            Node child = child(node, i, range);
            range = range.child(node, i);
            node = child;
        }
        return node;
    }

    /** Loads the path to {@code key}'s leaf, so that a change to it cannot fail on I/O. */
    void loadPath(BKey key) throws IOException {
        leafOf(key);
    }

    void scan(BKey from, BKey to, int limit, List<KeyValue> out) throws IOException {
        scan(root, KeyRange.ALL, from, to, limit, out);
    }

    private void scan(Node node, KeyRange range, BKey from, BKey to, int limit, List<KeyValue> out)
            throws IOException {
        if (node.isLeaf()) {
            int i = node.search(from);
            for (i = i >= 0 ? i : -i - 1; i < node.size() && out.size() < limit; i++) {
                BKey key = node.keys.get(i);
                if (key.compareTo(to) >= 0) {
                    return;
                }
                out.add(new KeyValue(key, node.values.get(i).clone()));
            }
            return;
        }
        for (int i = node.childIndex(from); i < node.size() && out.size() < limit; i++) {
            if (i > 0 && node.keys.get(i).compareTo(to) >= 0) {
                return;
            }
            scan(child(node, i, range), range.child(node, i), from, to, limit, out);
        }
    }

    /** Inserts or replaces; the path must be loaded ({@link #loadPath}). */
    void put(BKey key, byte[] value) throws IOException {
        List<Node> path = new ArrayList<>();
        List<Integer> slots = new ArrayList<>();
        Node leaf = descend(key, path, slots);
        int i = leaf.search(key);
        if (i >= 0) {
            leaf.remove(i);
            leaf.insertLeaf(i, key, value);
        } else {
            leaf.insertLeaf(-i - 1, key, value);
        }
        markDirty(path);
        for (int level = path.size() - 1; level >= 0 && path.get(level).bytes > capacity; level--) {
            split(path, slots, level);
        }
    }

    /** Deletes if present; the path must be loaded ({@link #loadPath}). */
    void delete(BKey key) throws IOException {
        List<Node> path = new ArrayList<>();
        List<Integer> slots = new ArrayList<>();
        Node leaf = descend(key, path, slots);
        int i = leaf.search(key);
        if (i < 0) {
            return;
        }
        leaf.remove(i);
        markDirty(path);
        if (leaf.size() == 0 && removable(path, slots, path.size() - 1)) {
            removeEmpty(path, slots, path.size() - 1);
        } else if (path.size() > 1 && leaf.bytes < capacity / 4) {
            mergeWithNeighbour(path.get(path.size() - 2), slots.get(path.size() - 2));
        }
        collapseRoot();
    }

    /** @return the leaf for {@code key}; {@code path} gets the nodes root first, {@code slots} the child index taken in each */
    private Node descend(BKey key, List<Node> path, List<Integer> slots) throws IOException {
        Node node = root;
        KeyRange range = KeyRange.ALL;
        path.add(node);
        while (!node.isLeaf()) {
            int i = node.childIndex(key);
            slots.add(i);
            Node child = child(node, i, range);
            range = range.child(node, i);
            node = child;
            path.add(node);
        }
        return node;
    }

    private void markDirty(List<Node> path) {
        for (Node node : path) {
            markDirty(node);
        }
    }

    private void markDirty(Node node) {
        if (!node.dirty) {
            node.dirty = true;
            dirtyCount++;
        }
    }

    /** Splits {@code path.get(level)} in two by bytes, inserting the right half into its parent. */
    private void split(List<Node> path, List<Integer> slots, int level) {
        Node node = path.get(level);
        int half = node.bytes / 2;
        int at = 0;
        for (int acc = 0; at < node.size() - 1 && acc + node.entryBytes(at) <= half; at++) {
            acc += node.entryBytes(at);
        }
        at = Math.max(at, 1);
        Node right = new Node(node.level);
        node.moveTail(at, right);
        markDirty(right);
        if (level == 0) {
            Node newRoot = new Node(node.level + 1);
            newRoot.insertChild(0, Node.MIN_KEY, node.block, node);
            newRoot.insertChild(1, right.keys.getFirst(), -1, right);
            markDirty(newRoot);
            root = newRoot;
            return;
        }
        Node parent = path.get(level - 1);
        parent.insertChild(slots.get(level - 1) + 1, right.keys.getFirst(), -1, right);
    }

    /**
     * Whether {@code path.get(level)} can leave its parent without I/O: the sibling that takes over its
     * key range must be loaded (a later op of the same transaction may land there, and applying a
     * prepared transaction must not read), or the parent must go too. An empty leaf that cannot go
     * stays, which is valid.
     */
    private boolean removable(List<Node> path, List<Integer> slots, int level) {
        if (level == 0) {
            return false;
        }
        Node parent = path.get(level - 1);
        int slot = slots.get(level - 1);
        if (parent.size() > 1) {
            return parent.children.get(slot > 0 ? slot - 1 : slot + 1) != null;
        }
        return level - 1 == 0 || removable(path, slots, level - 1);
    }

    /** Removes the empty {@code path.get(level)} from its parent, and the parent if it empties too. */
    private void removeEmpty(List<Node> path, List<Integer> slots, int level) {
        if (level == 0) {
            return;
        }
        Node node = path.get(level);
        Node parent = path.get(level - 1);
        int slot = slots.get(level - 1);
        BKey lowerBound = parent.keys.get(slot);
        parent.remove(slot);
        orphan(node);
        if (parent.size() == 0) {
            if (level - 1 == 0) {
                orphan(parent);
                root = new Node(0);
                markDirty(root);
                return;
            }
            removeEmpty(path, slots, level - 1);
            return;
        }
        if (slot == 0) {
            parent.keys.set(0, lowerBound);
        }
    }

    /** Merges child {@code slot} of {@code parent} with a loaded neighbour if both fit one node. */
    private void mergeWithNeighbour(Node parent, int slot) {
        int left;
        if (slot + 1 < parent.size() && fits(parent.children.get(slot), parent.children.get(slot + 1))) {
            left = slot;
        } else if (slot > 0 && fits(parent.children.get(slot - 1), parent.children.get(slot))) {
            left = slot - 1;
        } else {
            return;
        }
        Node into = parent.children.get(left);
        Node gone = parent.children.get(left + 1);
        into.appendAll(gone);
        markDirty(into);
        parent.remove(left + 1);
        orphan(gone);
    }

    private boolean fits(Node a, Node b) {
        return a != null && b != null && a.bytes + b.bytes <= capacity * 3 / 4;
    }

    /** An internal root with one loaded child gives way to the child. */
    private void collapseRoot() {
        while (!root.isLeaf() && root.size() == 1 && root.children.getFirst() != null) {
            Node child = root.children.getFirst();
            orphan(root);
            root = child;
            if (!root.isLeaf()) {
                root.keys.set(0, Node.MIN_KEY);
            }
            markDirty(root);
        }
    }

    private void orphan(Node node) {
        if (node.block >= 0) {
            orphanedBlocks.add(node.block);
        }
    }
}
