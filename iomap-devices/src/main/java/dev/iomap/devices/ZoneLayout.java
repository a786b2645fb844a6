package dev.iomap.devices;

import dev.iomap.device.Zone;
import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZoneType;
import java.util.ArrayList;
import java.util.List;

/**
 * The zones a {@link ZonedDevice} emulates: {@code zoneCount} zones of {@code zoneSize} bytes back to
 * back from offset 0, the first {@code conventionalZones} of them conventional and the rest
 * sequential-write-required with {@code zoneCapacity} writable bytes each (as host-managed SMR disks
 * put their conventional zones first; ZNS drives have none and may have a capacity below the size).
 *
 * @param zoneSize bytes per zone, positive
 * @param zoneCapacity writable bytes of each sequential zone, in {@code (0, zoneSize]}
 * @param zoneCount zones, at least 1
 * @param conventionalZones how many of them, from zone 0, are conventional
 * @param maxOpenZones open-zone resources of the device; 0 for no limit
 */
public record ZoneLayout(long zoneSize, long zoneCapacity, int zoneCount, int conventionalZones, int maxOpenZones) {

    /**
     * Checks the ranges above (block alignment is checked against a device by {@link ZonedDevice}).
     *
     * @throws IllegalArgumentException naming the bad value
     */
    public ZoneLayout {
        if (zoneSize <= 0 || zoneCapacity <= 0 || zoneCapacity > zoneSize) {
            throw new IllegalArgumentException("zone capacity " + zoneCapacity + " must be in (0, zone size "
                    + zoneSize + "]");
        }
        if (zoneCount < 1 || conventionalZones < 0 || conventionalZones > zoneCount) {
            throw new IllegalArgumentException("zone count " + zoneCount + " must be at least 1 and hold the "
                    + conventionalZones + " conventional zones");
        }
        if (maxOpenZones < 0) {
            throw new IllegalArgumentException("max open zones " + maxOpenZones + " is negative (0 means no limit)");
        }
        if (Math.multiplyHigh(zoneSize, zoneCount) != 0 || zoneSize * zoneCount < 0) {
            throw new IllegalArgumentException(zoneCount + " zones of " + zoneSize + " bytes overflow");
        }
    }

    /** @return bytes of all zones: the zoned device's capacity */
    public long zonedBytes() {
        return zoneSize * zoneCount;
    }

    /**
     * @param blockSize the backing device's block size, a power of two of at least 512
     * @return the backing capacity a {@link ZonedDevice} of this layout needs: the zones, and in front
     *     of them a geometry block and the two copies of the zone state
     */
    public long backingBytes(int blockSize) {
        return ZoneStateTable.dataStart(zoneCount, blockSize) + zonedBytes();
    }

    /**
     * @return the zone report of a zoned device {@link ZonedDevice#create made} with this layout, before
     *     anything is written to it: conventional zones, then empty sequential zones (what {@code mkfs}
     *     checks a format against before it makes the device)
     */
    public List<Zone> zones() {
        List<Zone> zones = new ArrayList<>(zoneCount);
        for (int i = 0; i < zoneCount; i++) {
            long start = i * zoneSize;
            zones.add(isSequential(i)
                    ? new Zone(start, zoneSize, zoneCapacity, ZoneType.SEQUENTIAL_WRITE_REQUIRED, ZoneCondition.EMPTY,
                            start)
                    : new Zone(start, zoneSize, zoneSize, ZoneType.CONVENTIONAL, ZoneCondition.NOT_WRITE_POINTER,
                            Zone.NO_WRITE_POINTER));
        }
        return List.copyOf(zones);
    }

    /**
     * @param index a zone number; not checked against {@code zoneCount}
     * @return whether that zone is sequential (every index past the conventional zones is)
     */
    public boolean isSequential(int index) {
        return index >= conventionalZones;
    }
}
