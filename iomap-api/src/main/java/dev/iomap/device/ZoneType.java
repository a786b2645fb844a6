package dev.iomap.device;

/**
 * How a zone of a {@link ZonedBlockDevice} may be written: the kernel's {@code BLK_ZONE_TYPE_*}.
 */
public enum ZoneType {
    /** Written anywhere, any number of times, like an ordinary block device (no write pointer). */
    CONVENTIONAL,
    /**
     * Written only at its write pointer, from the zone start up to its capacity; rewritten only after
     * a reset (host-managed SMR, ZNS). The kernel's {@code BLK_ZONE_TYPE_SEQWRITE_REQ}.
     */
    SEQUENTIAL_WRITE_REQUIRED;

    /** @return whether the zone has a write pointer */
    public boolean isSequential() {
        return this == SEQUENTIAL_WRITE_REQUIRED;
    }
}
