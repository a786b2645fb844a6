package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.CorruptFileSystemException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Applies transactions (their ops) to the tree and the reference counts: at commit and at replay.
 * A reference change becomes the puts and deletes of allocation-tree keys that mirror the new runs.
 * Not thread-safe: the store's lock guards it.
 */
final class BcachefsTransactions {
    private final Tree tree;
    private final RefCounts refs;
    private final long dataStart;
    private final long totalBlocks;

    BcachefsTransactions(Tree tree, RefCounts refs, long dataStart, long totalBlocks) {
        this.tree = tree;
        this.refs = refs;
        this.dataStart = dataStart;
        this.totalBlocks = totalBlocks;
    }

    /**
     * Checks a transaction and loads the nodes it touches, so that applying it cannot fail.
     *
     * @param space the live data space (to refuse references to free blocks), null during replay
     * @throws CorruptFileSystemException if a reference change leaves the data region or drops a count
     *     below 0, or a put or delete names a key of btree 0 (nothing is applied then)
     * @throws IllegalArgumentException if a reference is added to free blocks
     * @throws IOException if a node cannot be read
     */
    void prepare(List<StoreOp> ops, StoreSpace space) throws IOException {
        List<StoreOp.AddRefs> refOps = new ArrayList<>();
        for (StoreOp op : ops) {
            switch (op) {
                case StoreOp.Put put -> tree.loadPath(storeKeyFree(put.key()));
                case StoreOp.Delete delete -> tree.loadPath(storeKeyFree(delete.key()));
                case StoreOp.AddRefs add -> refOps.add(add);
            }
        }
        if (refOps.isEmpty()) {
            return;
        }
        for (StoreOp.AddRefs add : refOps) {
            // Checked before any range is built: a replayed entry's start and length are the device's
            // bytes, and their sum may overflow.
            if (add.start() < dataStart || add.length() < 1 || add.length() > totalBlocks - add.start()) {
                throw new CorruptFileSystemException("reference change on blocks [" + add.start() + ", +"
                        + add.length() + ") outside the data region [" + dataStart + ", " + totalBlocks + ")");
            }
        }
        RefCounts trial = refs.copyTouching(refOps);
        for (StoreOp.AddRefs add : refOps) {
            BlockRange range = new BlockRange(add.start(), add.length());
            if (space != null && add.delta() > 0) {
                for (BlockRange zero : trial.zeroIn(range)) {
                    if (space.anyFree(zero)) {
                        throw new IllegalArgumentException("reference added to blocks " + zero
                                + " that are free, not allocated");
                    }
                }
            }
            for (StoreOp treeOp : trial.apply(add.start(), add.length(), add.delta()).treeOps()) {
                tree.loadPath(treeOp instanceof StoreOp.Put p ? p.key() : ((StoreOp.Delete) treeOp).key());
            }
        }
    }

    /**
     * Btree 0's keys follow from the reference counts and change only through reference-change ops
     * ({@link StoreUpdate} refuses the rest), so a put or delete of one comes from a damaged journal entry.
     *
     * @return {@code key}
     * @throws CorruptFileSystemException if {@code key} is in btree 0
     */
    private static BKey storeKeyFree(BKey key) throws CorruptFileSystemException {
        if (key.btree() == RefCounts.BTREE) {
            throw new CorruptFileSystemException("journal op on " + key
                    + ": btree 0 is the store's allocation tree, changed only by reference changes");
        }
        return key;
    }

    /**
     * Applies a prepared transaction to the tree and the reference counts.
     *
     * @param seq its sequence
     * @param space where blocks whose count fell to 0 wait for the transaction to be durable; null
     *     during replay (free space is derived afterwards)
     */
    void apply(List<StoreOp> ops, long seq, StoreSpace space) throws IOException {
        for (StoreOp op : ops) {
            switch (op) {
                case StoreOp.Put put -> tree.put(put.key(), put.value());
                case StoreOp.Delete delete -> tree.delete(delete.key());
                case StoreOp.AddRefs add -> {
                    RefCounts.Change change = refs.apply(add.start(), add.length(), add.delta());
                    for (StoreOp treeOp : change.treeOps()) {
                        switch (treeOp) {
                            case StoreOp.Put put -> tree.put(put.key(), put.value());
                            case StoreOp.Delete delete -> tree.delete(delete.key());
                            case StoreOp.AddRefs ignored -> throw new IllegalStateException("nested reference change");
                        }
                    }
                    if (space != null) {
                        for (BlockRange zero : change.zeroed()) {
                            space.deferFree(seq, zero);
                        }
                    }
                }
            }
        }
    }
}
