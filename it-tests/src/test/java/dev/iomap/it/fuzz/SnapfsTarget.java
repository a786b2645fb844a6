package dev.iomap.it.fuzz;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.Geometry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * snapfs, the test kit's example adapter, on one geometry. It has an on-device format worth fuzzing:
 * a checksummed superblock in block 0 and two checksummed metadata slots after it (the whole
 * metadata, big-endian, as {@code SnapState} serialises it), then data without checksums.
 */
final class SnapfsTarget extends FuzzTarget {
    private static final int SLOT_HEADER = 24;

    private final int sectorSize;
    private final long capacity;

    SnapfsTarget(String label, int blockSize, int sectorSize, long capacity, Geometry mountGeometry) {
        super("snapfs", label, blockSize, mountGeometry);
        this.sectorSize = sectorSize;
        this.capacity = capacity;
    }

    @Override
    RamBlockDevice newImage() {
        return new RamBlockDevice(sectorSize, capacity);
    }

    @Override
    FormatOptions formatOptions() {
        return FormatOptions.blockSize(blockSize());
    }

    @Override
    void populate(IomapFileSystem fs) throws java.io.IOException {
        NamespaceImages.populate(fs, blockSize(), false);
    }

    @Override
    Workload workload(FileTree original) {
        return NamespaceImages.workload(original, blockSize());
    }

    @Override
    List<Structure> structures(RamBlockDevice image) throws java.io.IOException {
        ByteBuffer superblock = ByteBuffer.wrap(image.peek(0, blockSize()));
        int slotBlocks = superblock.getInt(20);
        List<Structure> structures = new ArrayList<>();
        structures.add(new Structure("snapfs superblock", 0, blockSize(), Framing.crcAfter(24, ByteOrder.BIG_ENDIAN),
                List.of(Field.be("block size", 8, 4), Field.be("total blocks", 12, 8),
                        Field.be("slot blocks", 20, 4))));
        for (int slot = 0; slot < 2; slot++) {
            long offset = (1 + (long) slot * slotBlocks) * blockSize();
            byte[] bytes = image.peek(offset, slotBlocks * blockSize());
            structures.add(new Structure("snapfs slot", offset, bytes.length, Framing.SNAPFS_SLOT, slotFields(bytes)));
        }
        return structures;
    }

    /** The header and the serialised metadata's fields, as {@code SnapState.serialize} writes them. */
    private static List<Field> slotFields(byte[] slot) {
        ByteBuffer in = ByteBuffer.wrap(slot);
        List<Field> fields = new ArrayList<>(List.of(Field.be("sequence", 8, 8), Field.be("payload length", 16, 4)));
        int end = SLOT_HEADER + in.getInt(16);
        if (end <= SLOT_HEADER || end > slot.length) {
            return fields;
        }
        fields.add(Field.be("next inode", SLOT_HEADER, 8));
        fields.add(Field.be("inode count", SLOT_HEADER + 8, 4));
        int at = SLOT_HEADER + 12;
        int inodes = in.getInt(SLOT_HEADER + 8);
        for (int i = 0; i < inodes && at + 33 <= end; i++) {
            long ino = in.getLong(at);
            String inode = "inode " + ino;
            List<Field> own = new ArrayList<>();
            own.addAll(List.of(Field.be(inode + " number", at, 8), Field.be(inode + " type", at + 8, 1),
                    Field.be(inode + " size", at + 9, 8), Field.be(inode + " links", at + 17, 4),
                    Field.be(inode + " entries", at + 29, 4)));
            int entries = in.getInt(at + 29);
            at += 33;
            for (int e = 0; e < entries && at + 2 <= end; e++) {
                int nameLength = in.getShort(at) & 0xffff;
                fields.add(Field.be(inode + " entry " + e + " name length", at, 2));
                fields.add(Field.be(inode + " entry " + e + " inode", at + 2 + nameLength, 8));
                at += 2 + nameLength + 8;
            }
            if (at + 4 > end) {
                fields.addAll(own);
                break;
            }
            int runs = in.getInt(at);
            own.add(Field.be(inode + " runs", at, 4));
            at += 4;
            for (int r = 0; r < runs && at + 21 <= end; r++) {
                String run = inode + " run " + r;
                own.addAll(List.of(Field.be(run + " file block", at, 8), Field.be(run + " device block", at + 8, 8),
                        Field.be(run + " length", at + 16, 4), Field.be(run + " state", at + 20, 1)));
                at += 21;
            }
            own.forEach(field -> fields.add(field.ownedBy(ino)));
        }
        return fields;
    }
}
