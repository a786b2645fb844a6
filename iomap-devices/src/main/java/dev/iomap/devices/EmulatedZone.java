package dev.iomap.devices;

import dev.iomap.device.Zone;
import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZoneType;
import dev.iomap.device.ZoneViolationException;
import dev.iomap.device.ZoneViolationException.Reason;
import java.util.concurrent.CompletableFuture;

/**
 * The state of one zone of a {@link ZonedDevice} and the rules a drive applies to it. Every mutable
 * field is guarded by the device's lock: callers hold it.
 */
final class EmulatedZone {
    final int index;
    final long start;
    final long capacityEnd;
    final boolean sequential;
    ZoneCondition condition;
    /** Where the next write must start: past every accepted write ({@link Zone#NO_WRITE_POINTER} if conventional). */
    long writePointer;
    /** End of the accepted writes that completed, in order. */
    long completed;
    /** Bumped by reset and finish: writes accepted before are void. */
    long generation;
    /** When the zone was last opened, for closing the oldest implicitly open zone first. */
    long openedAt;
    /** Completes when the last accepted write is done, successfully or not. */
    CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);

    EmulatedZone(int index, long start, long capacityEnd, boolean sequential) {
        this.index = index;
        this.start = start;
        this.capacityEnd = capacityEnd;
        this.sequential = sequential;
    }

    /** @return the zone as a report gives it */
    Zone describe(long zoneSize) {
        return new Zone(start, zoneSize, capacityEnd - start,
                sequential ? ZoneType.SEQUENTIAL_WRITE_REQUIRED : ZoneType.CONVENTIONAL, condition, writePointer);
    }

    /** @return the condition of a sequential zone holding no open resource, from its write pointer */
    ZoneCondition restingCondition() {
        if (writePointer == start) {
            return ZoneCondition.EMPTY;
        }
        return writePointer == capacityEnd ? ZoneCondition.FULL : ZoneCondition.CLOSED;
    }

    /** @return whether the zone failed (read-only or offline): no state change undoes that */
    boolean hasFailed() {
        return condition == ZoneCondition.READ_ONLY || condition == ZoneCondition.OFFLINE;
    }

    void checkWritable(String operation) throws ZoneViolationException {
        switch (condition) {
            case FULL -> throw violation(Reason.ZONE_FULL, operation + " to full zone " + index + " (reset it first)");
            case READ_ONLY -> throw violation(Reason.ZONE_READ_ONLY, operation + " to read-only zone " + index);
            case OFFLINE -> throw violation(Reason.ZONE_OFFLINE, operation + " to offline zone " + index);
            default -> {
            }
        }
    }

    void checkReadable() throws ZoneViolationException {
        if (condition == ZoneCondition.OFFLINE) {
            throw violation(Reason.ZONE_OFFLINE, "read of offline zone " + index);
        }
    }

    /** Reset and finish need a zone that has not failed. */
    void requireUsable(String operation) throws ZoneViolationException {
        if (hasFailed()) {
            throw violation(condition == ZoneCondition.OFFLINE ? Reason.ZONE_OFFLINE : Reason.ZONE_READ_ONLY,
                    operation + " of " + condition + " zone " + index);
        }
    }

    void requireSequential(String operation) throws ZoneViolationException {
        if (!sequential) {
            throw violation(Reason.NOT_SEQUENTIAL, operation + " of conventional zone " + index
                    + ": only sequential zones have a write pointer");
        }
    }

    ZoneViolationException violation(Reason reason, String message) {
        return new ZoneViolationException(reason, message, start, sequential ? writePointer : Zone.NO_WRITE_POINTER);
    }
}
