package dev.iomap.adapter.zonefs;

import dev.iomap.device.Zone;

/**
 * One file of the mount: a zone. A conventional zone file always has the zone's capacity as its size;
 * a sequential zone file's size on the device is its zone's write pointer, tracked here as the
 * bytes the device has acknowledged ({@link #written()}). Thread-safe.
 */
final class ZoneFile {
    private final long ino;
    private final String path;
    private final boolean sequential;
    private final long zoneStart;
    private final long capacity;
    private final int zoneIndex;
    private long written;

    /**
     * @param zoneIndex the zone's number on the device (also the inode number)
     * @param path the file's path, e.g. {@code /seq/3}
     * @param zone the zone as the report gave it at mount
     */
    ZoneFile(int zoneIndex, String path, Zone zone) {
        this.ino = zoneIndex;
        this.zoneIndex = zoneIndex;
        this.path = path;
        this.sequential = zone.isSequential();
        this.zoneStart = zone.start();
        this.capacity = zone.capacity();
        this.written = sequential ? zone.writtenBytes() : zone.capacity();
    }

    long ino() {
        return ino;
    }

    int zoneIndex() {
        return zoneIndex;
    }

    String path() {
        return path;
    }

    boolean isSequential() {
        return sequential;
    }

    long zoneStart() {
        return zoneStart;
    }

    /** @return the zone capacity: a conventional file's size, a sequential file's largest size */
    long capacity() {
        return capacity;
    }

    /** @return the file size on the device: the capacity, or the acknowledged write pointer offset */
    synchronized long written() {
        return written;
    }

    /** Records that the device holds the file up to {@code end} (an ioend completed). */
    synchronized void writtenUpTo(long end) {
        written = Math.max(written, end);
    }

    /** Sets the size on the device after a reset, a finish, or a resynchronisation from the zone. */
    synchronized void resync(long deviceSize) {
        written = deviceSize;
    }

    @Override
    public String toString() {
        return path + " (zone " + zoneIndex + ")";
    }
}
