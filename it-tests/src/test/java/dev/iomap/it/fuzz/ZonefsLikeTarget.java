package dev.iomap.it.fuzz;

import dev.iomap.adapter.support.SuperblockCodec;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * zonefs-like on one zone layout, over {@code ZonedDevice}'s emulation on a RAM image. The image is
 * the backing device, so the zoned device's own metadata is fuzzed with the filesystem's: the
 * geometry block (block 0), the two zone-state slots after it (iomap-devices' {@code ZoneStateTable};
 * adapter-zonefs-like's README), then the zones, zone 0 starting with the zonefs-like superblock
 * ({@code SuperblockCodec} frame). Every file of both zone types holds data; one sequential zone is
 * full, one empty.
 */
final class ZonefsLikeTarget extends FuzzTarget {
    private static final int S = SuperblockCodec.HEADER_BYTES;

    private final ZoneLayout layout;

    ZonefsLikeTarget(String label, int blockSize, ZoneLayout layout, Geometry mountGeometry) {
        super("zonefs-like", label, blockSize, mountGeometry);
        this.layout = layout;
    }

    @Override
    RamBlockDevice newImage() {
        return new RamBlockDevice(blockSize(), layout.backingBytes(blockSize()));
    }

    @Override
    BlockDevice formatting(RamBlockDevice image) throws IOException {
        return ZonedDevice.create(image, layout);
    }

    @Override
    BlockDevice opening(RamBlockDevice image) throws IOException {
        return ZonedDevice.open(image);
    }

    /** Closes the zoned device, which writes its zone state (a drive keeps its write pointers always). */
    @Override
    void release(BlockDevice device) throws IOException {
        device.close();
    }

    @Override
    FormatOptions formatOptions() {
        return FormatOptions.blockSize(blockSize());
    }

    private int conventionalFiles() {
        return Math.max(layout.conventionalZones() - 1, 0);
    }

    private int sequentialFiles() {
        return layout.zoneCount() - layout.conventionalZones() - (layout.conventionalZones() == 0 ? 1 : 0);
    }

    private int capacityBlocks() {
        return (int) (layout.zoneCapacity() / blockSize());
    }

    @Override
    void populate(IomapFileSystem fs) throws IOException {
        for (int n = 0; n < conventionalFiles(); n++) {
            String path = "/cnv/" + n;
            try (IomapFile file = fs.open(path)) {
                file.write(blockSize(), TestData.buffer(seedOf(path), blockSize(), 3 * blockSize()));
                file.write(7L * blockSize() + 5, TestData.buffer(seedOf(path), 7L * blockSize() + 5, 1000));
            }
        }
        int[] blocks = {3, capacityBlocks(), 0, 1, capacityBlocks() / 2};
        for (int n = 0; n < sequentialFiles(); n++) {
            String path = "/seq/" + n;
            int length = blocks[n % blocks.length] * blockSize();
            try (IomapFile file = fs.open(path)) {
                for (int at = 0; at < length; at += blockSize()) {
                    file.write(at, TestData.buffer(seedOf(path), at, blockSize()));
                }
            }
        }
        fs.sync();
    }

    /** An overwrite in /cnv/0, appends to /seq/0 and the empty /seq/2, a reset of the full /seq/1. */
    @Override
    Workload workload(FileTree original) {
        List<Workload.Step> steps = new ArrayList<>();
        if (conventionalFiles() > 0) {
            steps.add(Workload.write("/cnv/0", 2L * blockSize(), 21, blockSize()));
        }
        steps.add(Workload.write("/seq/0", original.nodes().get("/seq/0").size(), 22, 2 * blockSize()));
        steps.add(Workload.truncate("/seq/1", 0));
        steps.add(Workload.write("/seq/2", 0, 23, blockSize()));
        steps.add(Workload.fsync("/seq/0"));
        steps.add(Workload.sync());
        return new Workload(steps, path -> List.of("/cnv/0", "/seq/0", "/seq/1", "/seq/2").contains(path));
    }

    private int slotBytes() {
        return (int) ((24 + 16L * layout.zoneCount() + 4 + blockSize() - 1) / blockSize() * blockSize());
    }

    /** Zone z's bytes hold its file: /cnv/(z − 1) or /seq/n, whatever they contain. */
    @Override
    List<ImageMap.Owner> layoutOwners(long block) {
        long dataStart = blockSize() + 2L * slotBytes();
        long offset = block * blockSize() - dataStart;
        if (offset < 0) {
            return List.of();
        }
        int zone = (int) (offset / layout.zoneSize());
        long fileBlock = offset % layout.zoneSize() / blockSize();
        int cnv = layout.conventionalZones();
        if (zone == 0 || zone >= layout.zoneCount()) {
            return List.of();
        }
        String path = zone < cnv ? "/cnv/" + (zone - 1) : "/seq/" + (zone - cnv - (cnv == 0 ? 1 : 0));
        return List.of(new ImageMap.Owner(path, fileBlock));
    }

    @Override
    List<Structure> structures(RamBlockDevice image) {
        int zones = layout.zoneCount();
        int slotBytes = slotBytes();
        List<Structure> structures = new ArrayList<>();
        structures.add(new Structure("zoned geometry", 0, blockSize(), Framing.crcAfter(44, ByteOrder.LITTLE_ENDIAN),
                List.of(Field.le("version", 8, 4), Field.le("block size", 12, 4), Field.le("zone size", 16, 8),
                        Field.le("zone capacity", 24, 8), Field.le("zone count", 32, 4),
                        Field.le("conventional zones", 36, 4), Field.le("max open zones", 40, 4))));
        for (int slot = 0; slot < 2; slot++) {
            List<Field> fields = new ArrayList<>(List.of(Field.le("sequence", 8, 8), Field.le("zone count", 16, 4),
                    Field.le("reserved", 20, 4)));
            for (int zone = 0; zone < zones; zone++) {
                fields.add(Field.le("zone " + zone + " write pointer", 24 + 16 * zone, 8).ownedBy(zone));
                fields.add(Field.le("zone " + zone + " flags", 32 + 16 * zone, 4).ownedBy(zone));
                fields.add(Field.le("zone " + zone + " reserved", 36 + 16 * zone, 4));
            }
            structures.add(new Structure("zone state slot", blockSize() + (long) slot * slotBytes, slotBytes,
                    Framing.ZONE_STATE_SLOT, fields));
        }
        long dataStart = blockSize() + 2L * slotBytes;
        structures.add(new Structure("zonefs superblock", dataStart, blockSize(), Framing.SUPERBLOCK_CODEC,
                List.of(Field.le("version", 8, 4), Field.le("payload length", 12, 4), Field.le("block size", S, 4),
                        Field.le("zone count", S + 4, 4), Field.le("zone size", S + 8, 8),
                        Field.le("conventional files", S + 16, 4), Field.le("sequential files", S + 20, 4),
                        Field.le("zone layout digest", S + 24, 4), Field.le("mkfs time", S + 28, 8),
                        Field.le("label length", S + 36, 4))));
        return structures;
    }
}
