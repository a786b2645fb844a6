package dev.iomap.it.fuzz;

/** What became of one mutant; every outcome but {@link #VIOLATION} is allowed. */
enum Outcome {
    /** Mount (or opening the device under it) refused it with a one-line typed error. */
    REFUSED_AT_MOUNT,
    /** fsck reported it (or refused it with one line); mount accepted it and every file read back intact. */
    REFUSED_BY_FSCK,
    /** It mounted, fsck found nothing, and every file read back exactly as before. */
    SAME_DATA,
    /**
     * It mounted and only the file(s) owning the damaged data block read back differently, and only
     * inside that block: allowed because no adapter here checksums data.
     */
    DATA_CHANGED_IN_FLIPPED_FILE_ONLY,
    /**
     * A forged field of one regular file's own metadata (its inode slot, its extent list, its zone's
     * write pointer or condition), checksum recomputed and consistent with every other structure, so
     * that no structural check can see it: that file alone reads differently (or fails to read with a
     * one-line typed error), every other file reads back exactly. Outside the list, which did
     * not foresee forgeries no verifier can catch; reported apart so that it is visible.
     */
    CHANGED_IN_FORGED_FILE_ONLY,
    /**
     * Crash images only: the damage lies in the journal's last transaction, which replay then drops
     * as a power cut's torn tail (nothing tells the two apart), and every file reads back exactly as
     * the previous transaction left it.
     */
    ROLLED_BACK_LAST_TRANSACTION,
    /**
     * Adapters that checksum data only: it mounted, and the file(s) owning the damaged data block fail
     * their read with a one-line typed error (the extent's checksum, or data that does not decompress)
     * or read differently only inside the extent holding that block; every other file reads back
     * exactly.
     */
    CHECKSUM_FAILED_IN_FLIPPED_FILE_ONLY,
    /** A rule was broken; the verdict says which. */
    VIOLATION
}
