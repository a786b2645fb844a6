package dev.iomap.device;

import java.io.IOException;
import java.io.Serial;

/**
 * A {@link ZonedBlockDevice} refused a command that breaks the zone rules, as a host-managed drive
 * does (ZBC's "unaligned write command", "write boundary violation", "zone is read only",
 * "insufficient zone resources"; ZNS's "zone boundary error", "zone is full", "too many open
 * zones"). Nothing was written. The kernel reports these as {@code EIO}; this type says which rule.
 */
public class ZoneViolationException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** Which zone rule the command broke. */
    public enum Reason {
        /** A write to a sequential zone did not start at its write pointer. */
        NOT_AT_WRITE_POINTER,
        /** A write or append would pass the zone's capacity. */
        PAST_CAPACITY,
        /** A write crossed from one zone into another where one of them is sequential. */
        CROSSES_ZONE_BOUNDARY,
        /** A write, append or open to a zone that is {@link ZoneCondition#FULL}. */
        ZONE_FULL,
        /** A write, append or zone operation on a {@link ZoneCondition#READ_ONLY} zone. */
        ZONE_READ_ONLY,
        /** Any I/O or zone operation on an {@link ZoneCondition#OFFLINE} zone. */
        ZONE_OFFLINE,
        /** Opening the zone (explicitly or by writing) needs an open-zone resource and none is free. */
        TOO_MANY_OPEN_ZONES,
        /** A zone operation or append that only sequential zones have, sent to a conventional zone. */
        NOT_SEQUENTIAL
    }

    private final Reason reason;
    private final long zoneStart;
    private final long writePointer;

    /**
     * @param reason which rule
     * @param message what was asked and what the zone allows
     * @param zoneStart device offset of the zone's start
     * @param writePointer the zone's write pointer when the command was refused, or
     *     {@link Zone#NO_WRITE_POINTER}
     */
    public ZoneViolationException(Reason reason, String message, long zoneStart, long writePointer) {
        super(message + " [" + reason + ", zone at " + zoneStart
                + (writePointer == Zone.NO_WRITE_POINTER ? "" : ", write pointer " + writePointer) + "]");
        this.reason = reason;
        this.zoneStart = zoneStart;
        this.writePointer = writePointer;
    }

    /** @return which rule the command broke */
    public Reason reason() {
        return reason;
    }

    /** @return device offset of the zone's start */
    public long zoneStart() {
        return zoneStart;
    }

    /** @return the zone's write pointer when the command was refused, or {@link Zone#NO_WRITE_POINTER} */
    public long writePointer() {
        return writePointer;
    }
}
