package dev.iomap.core.mm;

import java.io.IOException;

/**
 * Writeback errors of one inode, reported to each open file once: the kernel's {@code errseq_t}.
 *
 * <p>Every recorded error advances a sequence number; an open file samples it when opened and, at
 * fsync, sees the latest error if the sequence moved since its last look. Thread-safe.
 */
public final class WritebackError {
    private long sequence;
    private IOException latest;

    /** No error recorded yet. */
    public WritebackError() {
    }

    /**
     * Records an error; never drops it (the kernel's {@code errseq_set}, through
     * {@code mapping_set_error}).
     *
     * @param error the error
     */
    public synchronized void record(IOException error) {
        sequence++;
        latest = error;
    }

    /**
     * @return the current sequence number, for a newly opened file (the kernel's {@code errseq_sample},
     *     except that an error nobody has seen yet is not reported to the new file)
     */
    public synchronized long sample() {
        return sequence;
    }

    /**
     * The error recorded since {@code seen}, if any (the kernel's {@code errseq_check}).
     *
     * @param seen the sequence number the caller saw last
     * @return the latest error if the sequence moved, else null
     */
    public synchronized IOException since(long seen) {
        return sequence == seen ? null : latest;
    }
}
