package dev.iomap.device;

/**
 * The state of one zone as a zone report gives it: the kernel's {@code BLK_ZONE_COND_*}, the ZBC and
 * ZNS zone states.
 *
 * <p>A sequential zone is {@link #EMPTY} after a reset, becomes {@link #IMPLICIT_OPEN} with its first
 * write (or {@link #EXPLICIT_OPEN} when opened on request), {@link #CLOSED} when closed with data in it
 * (or after a power cycle), and {@link #FULL} when its write pointer reaches the capacity or it is
 * finished. The open conditions count against {@link ZonedBlockDevice#maxOpenZones()}.
 */
public enum ZoneCondition {
    /** A conventional zone: it has no write pointer. */
    NOT_WRITE_POINTER,
    /** Write pointer at the zone start, nothing written. */
    EMPTY,
    /** Opened by a write; the device may close it to make room for another open zone. */
    IMPLICIT_OPEN,
    /** Opened on request; stays open until closed, finished or reset. */
    EXPLICIT_OPEN,
    /** Partly written and not open: holds no open-zone resource. */
    CLOSED,
    /** Write pointer at the capacity (written up to it, or finished): no more writes until a reset. */
    FULL,
    /** Readable, never writable again (a failing drive's zone). */
    READ_ONLY,
    /** Neither readable nor writable (a dead zone). */
    OFFLINE;

    /** @return whether the zone holds one of the device's open-zone resources */
    public boolean isOpen() {
        return this == IMPLICIT_OPEN || this == EXPLICIT_OPEN;
    }
}
