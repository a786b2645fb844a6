package dev.iomap.devices;

import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZoneViolationException;
import dev.iomap.device.ZoneViolationException.Reason;

/**
 * The open-zone resources of a {@link ZonedDevice}: at most {@code max} zones implicitly or explicitly
 * open at once (0 for no limit). When a zone must open and none is free, the oldest implicitly open
 * zone is closed to make room, as ZBC drives do; if every open zone was opened explicitly, the open is
 * refused. Callers hold the device's lock.
 */
final class OpenZoneLimit {
    private final int max;
    private final EmulatedZone[] zones;
    private int open;
    private long clock;

    OpenZoneLimit(int max, EmulatedZone[] zones) {
        this.max = max;
        this.zones = zones;
    }

    /**
     * Opens a zone that is not open.
     *
     * @param condition {@link ZoneCondition#IMPLICIT_OPEN} or {@link ZoneCondition#EXPLICIT_OPEN}
     * @throws ZoneViolationException {@link Reason#TOO_MANY_OPEN_ZONES} if no resource can be freed
     */
    void open(EmulatedZone zone, ZoneCondition condition) throws ZoneViolationException {
        if (max > 0 && open >= max) {
            EmulatedZone victim = null;
            for (EmulatedZone candidate : zones) {
                if (candidate.condition == ZoneCondition.IMPLICIT_OPEN
                        && (victim == null || candidate.openedAt < victim.openedAt)) {
                    victim = candidate;
                }
            }
            if (victim == null) {
                throw zone.violation(Reason.TOO_MANY_OPEN_ZONES, "opening zone " + zone.index + " needs one of the "
                        + max + " open-zone resources and every open zone was opened explicitly");
            }
            release(victim);
        }
        zone.condition = condition;
        zone.openedAt = ++clock;
        open++;
    }

    /** Gives back the zone's resource, if it holds one; it rests as empty, closed or full. */
    void release(EmulatedZone zone) {
        if (zone.condition.isOpen()) {
            open--;
            zone.condition = zone.restingCondition();
        }
    }
}
