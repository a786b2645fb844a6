package dev.iomap.adapter.bcachefs.store;

/** One operation of a transaction, as the journal logs it. */
sealed interface StoreOp {
    /** Journal type byte of a put. */
    byte PUT = 1;
    /** Journal type byte of a delete. */
    byte DELETE = 2;
    /** Journal type byte of a reference change. */
    byte ADD_REFS = 3;

    /**
     * @param key the key
     * @param value its new value (not copied: owned by the op)
     */
    record Put(BKey key, byte[] value) implements StoreOp {
    }

    /** @param key the key deleted */
    record Delete(BKey key) implements StoreOp {
    }

    /**
     * @param start first data block
     * @param length blocks, at least 1
     * @param delta +1 or -1
     */
    record AddRefs(long start, long length, int delta) implements StoreOp {
    }
}
