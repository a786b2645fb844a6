package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockRange;
import java.io.IOException;

/**
 * One transaction on a {@link KeyStore}: key updates and data-block reference changes that commit
 * together, as one journal entry, or not at all. Not thread-safe; used by one thread and then
 * committed or abandoned (an abandoned update has no effect).
 */
public interface Update {

    /**
     * Inserts or replaces a key.
     *
     * @param key the key
     * @param value its value (copied), at most {@link StoreLimits#MAX_VALUE_BYTES} bytes
     * @return this
     * @throws IllegalArgumentException if the value is too long
     */
    Update put(BKey key, byte[] value);

    /**
     * Deletes a key (nothing if absent at commit).
     *
     * @param key the key
     * @return this
     */
    Update delete(BKey key);

    /**
     * Adds {@code delta} to the reference count of every data block in {@code blocks}: +1 when an
     * extent key starts pointing to them (allocation, reflink), -1 when one stops. A block whose count
     * reaches 0 at commit becomes free, reusable once this transaction is durable (so a crash cannot
     * replay a tree that points to reused blocks).
     *
     * @param blocks data blocks (from {@link DataSpace#allocate}, or already referenced)
     * @param delta +1 or -1
     * @return this
     */
    Update addRefs(BlockRange blocks, int delta);

    /**
     * Applies the transaction: readers see it at once; it is durable after {@link KeyStore#flush}.
     *
     * @return its sequence number (increasing)
     * @throws IOException if the store failed or the transaction cannot fit the journal even after a
     *     checkpoint ({@link dev.iomap.api.NoSpaceException}); nothing is applied then
     * @throws IllegalStateException if the update was committed already
     */
    long commit() throws IOException;

    /**
     * {@link #commit} of a transaction that only rewrites keys that exist (inode records brought up to date
     * by writeback, sync and unmount): it may use the node reserve down to what data writeback may, so that
     * a full file system can still write back and unmount. This default commits as {@link #commit}.
     *
     * @return its sequence number
     * @throws IOException as {@link #commit}
     */
    default long commitRewrite() throws IOException {
        return commit();
    }
}
