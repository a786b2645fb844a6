package dev.iomap.adapter.bcachefs.store;

/**
 * One entry of a B-tree.
 *
 * @param key its key
 * @param value its value, owned by the receiver (a copy of what the store holds)
 */
public record KeyValue(BKey key, byte[] value) {
}
