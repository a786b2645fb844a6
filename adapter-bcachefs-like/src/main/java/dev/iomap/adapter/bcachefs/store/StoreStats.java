package dev.iomap.adapter.bcachefs.store;

/**
 * Counters of a {@link KeyStore} since it was opened.
 *
 * @param journalBytes bytes written to the journal (key entries, headers, padding)
 * @param journalFlushes journal writes waited for
 * @param nodeBytes bytes of tree nodes written by checkpoints
 * @param superblockBytes bytes of superblock written
 * @param checkpoints checkpoints done
 */
public record StoreStats(long journalBytes, long journalFlushes, long nodeBytes, long superblockBytes,
        long checkpoints) {
}
