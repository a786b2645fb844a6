package dev.iomap.adapter.bcachefs.store;

/**
 * A key in one of the store's B-trees: the btree it lives in, then a position {@code (inode, offset)}
 * (bcachefs's {@code struct bpos} without the snapshot field). Keys sort by btree, then inode, then
 * offset, all as unsigned 64-bit values, so {@code -1L} is the largest inode or offset.
 *
 * @param btree the tree (0 to {@link #MAX_BTREE})
 * @param inode first component of the position
 * @param offset second component of the position
 */
public record BKey(int btree, long inode, long offset) implements Comparable<BKey> {
    /** Largest btree id. */
    public static final int MAX_BTREE = 15;

    /**
     * @throws IllegalArgumentException if {@code btree} is outside 0..{@link #MAX_BTREE}
     */
    public BKey {
        if (btree < 0 || btree > MAX_BTREE) {
            throw new IllegalArgumentException("btree id must be 0.." + MAX_BTREE + ", got " + btree);
        }
    }

    @Override
    public int compareTo(BKey other) {
        int c = Integer.compare(btree, other.btree);
        if (c != 0) {
            return c;
        }
        c = Long.compareUnsigned(inode, other.inode);
        return c != 0 ? c : Long.compareUnsigned(offset, other.offset);
    }
}
