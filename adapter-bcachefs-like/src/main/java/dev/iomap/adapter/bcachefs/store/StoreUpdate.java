package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockRange;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** A transaction of a {@link BtreeStore}: ops collected, then committed as one journal entry. */
final class StoreUpdate implements Update {
    private final BtreeStore store;
    private final List<StoreOp> ops = new ArrayList<>();
    private boolean committed;

    StoreUpdate(BtreeStore store) {
        this.store = store;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException also if the key is in btree 0 (the store's own)
     */
    @Override
    public Update put(BKey key, byte[] value) {
        checkKey(key);
        if (value.length > StoreLimits.MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("value of " + value.length + " bytes for " + key + " exceeds "
                    + StoreLimits.MAX_VALUE_BYTES);
        }
        ops.add(new StoreOp.Put(key, value.clone()));
        return this;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if the key is in btree 0 (the store's own)
     */
    @Override
    public Update delete(BKey key) {
        checkKey(key);
        ops.add(new StoreOp.Delete(key));
        return this;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if {@code delta} is not +1 or -1
     */
    @Override
    public Update addRefs(BlockRange blocks, int delta) {
        Objects.requireNonNull(blocks, "blocks");
        if (delta != 1 && delta != -1) {
            throw new IllegalArgumentException("reference delta must be +1 or -1, got " + delta);
        }
        ops.add(new StoreOp.AddRefs(blocks.start(), blocks.length(), delta));
        return this;
    }

    @Override
    public long commit() throws IOException {
        return commit(false);
    }

    @Override
    public long commitRewrite() throws IOException {
        return commit(true);
    }

    private long commit(boolean rewrite) throws IOException {
        if (committed) {
            throw new IllegalStateException("the update was committed already");
        }
        long seq = store.commit(List.copyOf(ops), rewrite);
        committed = true;
        return seq;
    }

    private static void checkKey(BKey key) {
        if (key.btree() == RefCounts.BTREE) {
            throw new IllegalArgumentException("btree 0 is the store's allocation tree: " + key);
        }
    }
}
