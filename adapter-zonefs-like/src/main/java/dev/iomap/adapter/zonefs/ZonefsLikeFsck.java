package dev.iomap.adapter.zonefs;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FsckReport;
import dev.iomap.device.Zone;
import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZonedBlockDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks of an unmounted zonefs-like image. With no metadata but the superblock, what can be
 * wrong is the superblock itself, a zone layout that changed since mkfs or file counts and zone size
 * that disagree with it, the device's own zone state (each copy of the zone state that did not verify,
 * from {@link ZonedBlockDevice#stateProblems}), zones that failed (read-only or offline), and a
 * sequential file whose size (write pointer) is not a whole number of filesystem blocks.
 */
final class ZonefsLikeFsck {

    private ZonefsLikeFsck() {
    }

    static FsckReport check(ZonedBlockDevice device) throws IOException {
        List<String> problems = new ArrayList<>(device.stateProblems());
        ZonefsSuperblock superblock;
        try {
            superblock = ZonefsSuperblock.read(device);
        } catch (CorruptFileSystemException e) {
            problems.add(e.getMessage());
            return new FsckReport(problems, "the superblock and the zone state");
        }
        List<Zone> zones = device.zones();
        try {
            ZonefsLikeAdapter.checkLayout(superblock, zones);
        } catch (CorruptFileSystemException e) {
            problems.add(e.getMessage());
            return new FsckReport(problems, "the superblock, the zone state and the zone layout");
        }
        if (zones.getFirst().isSequential() && zones.getFirst().condition() != ZoneCondition.FULL) {
            problems.add("zone 0 (superblock) is sequential but " + zones.getFirst().condition()
                    + ", not FULL [device offset 0]");
        }
        for (int i = 1; i < zones.size(); i++) {
            Zone zone = zones.get(i);
            if (zone.condition() == ZoneCondition.OFFLINE || zone.condition() == ZoneCondition.READ_ONLY) {
                problems.add("zone " + i + " is " + zone.condition() + " [device offset " + zone.start() + "]");
            }
            if (zone.isSequential() && zone.writtenBytes() % superblock.blockSize() != 0) {
                problems.add("zone " + i + " write pointer " + zone.writePointer() + " is not a whole number of "
                        + superblock.blockSize() + "-byte blocks past the zone start [device offset "
                        + zone.start() + "]");
            }
        }
        return new FsckReport(problems, "the superblock, both copies of the zone state, the file counts and "
                + zones.size() + " zones");
    }
}
