package dev.iomap.device;

/** What a device write carries, so write amplification can be split into data and metadata. */
public enum IoPurpose {
    /** File data written back from the page cache (or directly). */
    DATA,
    /** Filesystem metadata: superblock, journal, extent maps, directories. */
    METADATA
}
