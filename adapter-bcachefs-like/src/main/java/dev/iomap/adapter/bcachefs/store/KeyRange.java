package dev.iomap.adapter.bcachefs.store;

import dev.iomap.api.CorruptFileSystemException;

/**
 * The keys a node may hold, as its parent gives them: {@code [low, high)}, {@code high} null for no
 * upper bound (the root and the last child of each level). Child {@code i} of an internal node holds
 * keys from its entry's key (the node's own lower bound for child 0) up to the next entry's key (the
 * node's own upper bound for the last child).
 *
 * @param low the lowest key allowed
 * @param high the first key not allowed, or null
 */
record KeyRange(BKey low, BKey high) {
    /** The root's range: every key. */
    static final KeyRange ALL = new KeyRange(Node.MIN_KEY, null);

    /** @return the range child {@code i} of {@code parent} (whose range this is) may hold */
    KeyRange child(Node parent, int i) {
        BKey childLow = i == 0 ? low : parent.keys.get(i);
        BKey childHigh = i + 1 < parent.size() ? parent.keys.get(i + 1) : high;
        return new KeyRange(childLow, childHigh);
    }

    /**
     * Checks a node read from the device against the range its parent gives it: a leaf's keys and an
     * internal node's keys after the first must lie inside it (an internal node's first key is not used
     * for lookups: its first child starts at the node's own lower bound), as fsck's check requires; a
     * node copied over another, or a forged key, is caught here before the read path follows it.
     *
     * @param node the node just decoded
     * @throws CorruptFileSystemException naming the node's block and the key outside the range
     */
    void check(Node node) throws CorruptFileSystemException {
        for (int i = 0; i < node.size(); i++) {
            BKey key = node.keys.get(i);
            boolean belowLow = (node.isLeaf() || i > 0) && key.compareTo(low) < 0;
            if (belowLow || (high != null && key.compareTo(high) >= 0)) {
                throw new CorruptFileSystemException("B-tree node at block " + node.block + ": key " + i + " " + key
                        + " is outside the range " + this + " its parent gives it");
            }
        }
    }

    @Override
    public String toString() {
        return "[" + low + ", " + (high == null ? "end" : high) + ")";
    }
}
