package dev.iomap.device;

import java.util.Objects;

/**
 * One zone of a {@link ZonedBlockDevice}, as a zone report gives it: the kernel's
 * {@code struct blk_zone}. A snapshot: the device's zone moves on, this record does not.
 *
 * <p>Invariants: {@code start}, {@code size} and {@code capacity} are multiples of the device block
 * size with {@code 0 < capacity <= size}. Only {@code [start, start + capacity)} holds data; the rest
 * of the zone (ZNS zones whose capacity is smaller than their size) is never readable or writable
 * data. A conventional zone has capacity equal to its size, write pointer {@link #NO_WRITE_POINTER}
 * and condition {@link ZoneCondition#NOT_WRITE_POINTER} (or {@link ZoneCondition#READ_ONLY} or
 * {@link ZoneCondition#OFFLINE} when it failed). A sequential zone's write pointer lies in
 * {@code [start, start + capacity]}: the next byte it accepts, the zone start when
 * {@link ZoneCondition#EMPTY}, {@code start + capacity} when {@link ZoneCondition#FULL}.
 *
 * @param start device byte offset of the zone's first byte
 * @param size bytes from this zone's start to the next zone's
 * @param capacity bytes that can be written, from the start
 * @param type conventional or sequential-write-required
 * @param condition the zone's state
 * @param writePointer device byte offset of the next write, or {@link #NO_WRITE_POINTER}
 */
public record Zone(long start, long size, long capacity, ZoneType type, ZoneCondition condition,
        long writePointer) {

    /** The write pointer of a conventional zone, which has none. */
    public static final long NO_WRITE_POINTER = -1L;

    /**
     * Checks the invariants above (except block alignment, which only the device knows).
     *
     * @throws IllegalArgumentException if they do not hold
     */
    public Zone {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(condition, "condition");
        if (start < 0 || size <= 0 || capacity <= 0 || capacity > size || start + size < 0) {
            throw new IllegalArgumentException("bad zone geometry start=" + start + " size=" + size
                    + " capacity=" + capacity);
        }
        if (!type.isSequential()) {
            boolean failed = condition == ZoneCondition.READ_ONLY || condition == ZoneCondition.OFFLINE;
            if ((condition != ZoneCondition.NOT_WRITE_POINTER && !failed) || writePointer != NO_WRITE_POINTER
                    || capacity != size) {
                throw new IllegalArgumentException("a conventional zone has no write pointer and no"
                        + " capacity short of its size: " + condition + " wp=" + writePointer);
            }
        } else if (condition == ZoneCondition.NOT_WRITE_POINTER
                || writePointer < start || writePointer > start + capacity) {
            throw new IllegalArgumentException("sequential zone at " + start + " has condition "
                    + condition + " and write pointer " + writePointer + " outside [start, start + capacity]");
        }
    }

    /** @return the device offset just past the zone (the next zone's start) */
    public long end() {
        return start + size;
    }

    /** @return the device offset just past the writable part of the zone */
    public long capacityEnd() {
        return start + capacity;
    }

    /** @return whether the zone has a write pointer */
    public boolean isSequential() {
        return type.isSequential();
    }

    /**
     * @return bytes written in a sequential zone (write pointer minus start); a conventional zone's
     *     capacity
     */
    public long writtenBytes() {
        return isSequential() ? writePointer - start : capacity;
    }

    /**
     * @param offset a device byte offset
     * @return whether it lies in this zone
     */
    public boolean contains(long offset) {
        return offset >= start && offset < end();
    }
}
