package dev.iomap.it.fuzz;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.SuperblockCodec;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.XattrMode;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * xfs-like on one geometry. Its structures are the ones adapter-xfs-like's README documents: the
 * superblock ({@code SuperblockCodec} frame) in block 0, and every block that verifies as a
 * {@code MetadataBlock} written for its own number (group headers, free-space and refcount leaves,
 * inode table, extent lists, directories, symlink and extended-attribute chains, the journal's own
 * blocks); blocks of the journal region that do not (logged images of other blocks, stale log space) are
 * "journal log" blocks. Besides the namespace images' files, the image holds a hard link, a symbolic link
 * with its target in the slot and one with its target in symlink blocks (both dangling, so that what
 * reads through them depends on their own metadata only), extended attributes (one in a single block,
 * one over several at small block sizes) and a file with every attribute set.
 */
final class XfsLikeTarget extends FuzzTarget {
    private static final SuperblockCodec SUPERBLOCK = new SuperblockCodec("xfs-like", "XFS-LIKE", 3);
    /** Payload offset inside a metadata block. */
    private static final int P = MetadataBlock.HEADER_BYTES;
    /** Payload offset inside the superblock. */
    private static final int S = SuperblockCodec.HEADER_BYTES;
    private static final int INODE_SLOT = 296;
    /** Bytes of an inode slot before its inline area (extents, or a short symbolic-link target). */
    private static final int INODE_CORE = 128;

    private final int sectorSize;
    private final long capacity;
    private final Map<String, String> properties;
    private final boolean crashImage;

    XfsLikeTarget(String label, int blockSize, int sectorSize, long capacity, Map<String, String> properties,
            Geometry mountGeometry) {
        this(label, blockSize, sectorSize, capacity, properties, mountGeometry, false);
    }

    /** @param crashImage whether the image is taken mounted after a sync, its journal not checkpointed */
    XfsLikeTarget(String label, int blockSize, int sectorSize, long capacity, Map<String, String> properties,
            Geometry mountGeometry, boolean crashImage) {
        super("xfs-like", label, blockSize, mountGeometry);
        this.crashImage = crashImage;
        this.sectorSize = sectorSize;
        this.capacity = capacity;
        this.properties = Map.copyOf(properties);
    }

    @Override
    RamBlockDevice newImage() {
        return new RamBlockDevice(sectorSize, capacity);
    }

    @Override
    boolean crashImage() {
        return crashImage;
    }

    /** The log positions from the first descriptor of the newest transaction to its commit. */
    @Override
    java.util.Set<Long> lastTransactionBlocks(RamBlockDevice image, ImageMap map) throws IOException {
        if (!crashImage) {
            return java.util.Set.of();
        }
        ByteBuffer superblock = ByteBuffer.wrap(image.peek(0, blockSize())).order(ByteOrder.LITTLE_ENDIAN);
        long logStart = superblock.getLong(S + 12) + 1;
        long logBlocks = superblock.getLong(S + 20) - 1;
        long newest = -1;
        long commit = -1;
        for (Structure structure : map.structures()) {
            long sequence = ByteBuffer.wrap(image.peek(structure.offset(), 24)).order(ByteOrder.LITTLE_ENDIAN).getLong(16);
            if (structure.type().equals("JCMT") && sequence > newest) {
                newest = sequence;
                commit = structure.offset() / blockSize();
            }
        }
        java.util.Set<Long> blocks = new java.util.TreeSet<>(List.of(commit));
        long block = commit;
        while (blocks.size() < logBlocks) {
            block = logStart + Math.floorMod(block - 1 - logStart, logBlocks);
            Structure structure = map.structureAt(block);
            long sequence = ByteBuffer.wrap(image.peek(block * blockSize(), 24)).order(ByteOrder.LITTLE_ENDIAN).getLong(16);
            boolean descriptor = structure != null && structure.type().equals("JDSC") && sequence == newest;
            if (!descriptor && (structure == null || !structure.type().equals("journal log"))) {
                return blocks;
            }
            blocks.add(block);
        }
        return blocks;
    }

    @Override
    FormatOptions formatOptions() {
        return new FormatOptions(blockSize(), "fuzz", properties);
    }

    @Override
    void populate(IomapFileSystem fs) throws IOException {
        NamespaceImages.populate(fs, blockSize(), true);
        NewInodeAttributes owner = new NewInodeAttributes(0640, 1000, 100);
        fs.createLink("/d1/hard", "/one");
        fs.createSymbolicLink("/link", "absent", owner);
        fs.createSymbolicLink("/d1/longlink", "sub/../".repeat(300) + "../absent", owner);
        fs.setXattr("/one", "user.small", "value".getBytes(StandardCharsets.US_ASCII), XattrMode.CREATE);
        fs.setXattr("/d1", "trusted.big", TestData.pattern(FuzzTarget.seedOf("/d1"), 0, 5000), XattrMode.CREATE);
        fs.setAttributes("/d1/mid", AttributeChange.none().withMode(04755).withUid(7).withGid(8)
                .withAtime(Instant.ofEpochSecond(-1_000_000_000L, 999_999_999)).withMtime(Instant.ofEpochSecond(1)));
        fs.sync();
    }

    @Override
    Workload workload(FileTree original) {
        return NamespaceImages.workload(original, blockSize());
    }

    @Override
    CleanFlag cleanFlag(RamBlockDevice image) throws IOException {
        try {
            ByteBuffer payload = SUPERBLOCK.decode(ByteBuffer.wrap(image.peek(0, blockSize())), 0).payload();
            return payload.getInt(64) == 1 ? CleanFlag.CLEAN : CleanFlag.NOT_CLEAN;
        } catch (CorruptFileSystemException | IndexOutOfBoundsException e) {
            return CleanFlag.NOT_CLEAN;
        }
    }

    @Override
    List<Structure> structures(RamBlockDevice image) throws IOException {
        ByteBuffer superblock = ByteBuffer.wrap(image.peek(0, blockSize())).order(ByteOrder.LITTLE_ENDIAN);
        long totalBlocks = superblock.getLong(S + 4);
        long journalStart = superblock.getLong(S + 12);
        long journalEnd = journalStart + superblock.getLong(S + 20);
        List<Structure> structures = new ArrayList<>();
        structures.add(new Structure("superblock", 0, blockSize(), Framing.SUPERBLOCK_CODEC, superblockFields()));
        for (long block = 1; block < totalBlocks; block++) {
            byte[] bytes = image.peek(block * blockSize(), blockSize());
            try {
                MetadataBlock.decodeAnyType(ByteBuffer.wrap(bytes), block);
                String magic = new String(bytes, 0, 4, StandardCharsets.US_ASCII);
                structures.add(new Structure(magic, block * blockSize(), blockSize(), Framing.METADATA_BLOCK,
                        fields(magic, bytes)));
            } catch (CorruptFileSystemException e) {
                if (block >= journalStart && block < journalEnd) {
                    structures.add(new Structure("journal log", block * blockSize(), blockSize(), Framing.NONE, List.of()));
                }
            }
        }
        return structures;
    }

    private static List<Field> superblockFields() {
        return List.of(Field.le("version", 8, 4), Field.le("payload length", 12, 4),
                Field.le("block size", S, 4), Field.le("total blocks", S + 4, 8),
                Field.le("journal start", S + 12, 8), Field.le("journal blocks", S + 20, 8),
                Field.le("inode table start", S + 28, 8), Field.le("inode table blocks", S + 36, 8),
                Field.le("group count", S + 44, 4), Field.le("blocks per group", S + 48, 8),
                Field.le("root inode", S + 56, 8), Field.le("clean", S + 64, 4), Field.le("uuid", S + 68, 8),
                Field.le("label length", S + 76, 4));
    }

    /** The documented fields of a metadata block, from its payload. */
    private static List<Field> fields(String magic, byte[] bytes) {
        ByteBuffer block = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        List<Field> fields = new ArrayList<>(List.of(Field.le("payload length", 4, 4), Field.le("sequence", 16, 8)));
        switch (magic) {
            case "XAGF" -> fields.addAll(List.of(Field.le("group", P, 4), Field.le("reserved", P + 4, 4),
                    Field.le("first block", P + 8, 8), Field.le("blocks", P + 16, 8),
                    Field.le("free blocks", P + 24, 8), Field.le("free extents", P + 32, 8),
                    Field.le("longest free extent", P + 40, 8), Field.le("refcount records", P + 48, 8),
                    Field.le("free-space leaves", P + 56, 4), Field.le("refcount leaves", P + 60, 4)));
            case "XBNO" -> {
                leafHeader(fields);
                for (int r = 0; r < Math.min(block.getInt(P + 8), 64); r++) {
                    fields.add(Field.le("record " + r + " start", P + 16 + 16 * r, 8));
                    fields.add(Field.le("record " + r + " length", P + 24 + 16 * r, 8));
                }
            }
            case "XRFC" -> {
                leafHeader(fields);
                for (int r = 0; r < Math.min(block.getInt(P + 8), 64); r++) {
                    fields.add(Field.le("record " + r + " start", P + 16 + 20 * r, 8));
                    fields.add(Field.le("record " + r + " length", P + 24 + 20 * r, 8));
                    fields.add(Field.le("record " + r + " count", P + 32 + 20 * r, 4));
                }
            }
            case "XINO" -> inodeFields(block, fields);
            case "XBMX" -> {
                List<Field> own = new ArrayList<>(List.of(Field.le("owner", P, 8), Field.le("next list block", P + 8, 8),
                        Field.le("extents", P + 16, 4), Field.le("reserved", P + 20, 4)));
                for (int e = 0; e < Math.min(block.getInt(P + 16), 64); e++) {
                    extentFields(own, "extent " + e, P + 24 + 28 * e);
                }
                long ino = block.getLong(P);
                own.forEach(field -> fields.add(field.ownedBy(ino)));
            }
            case "XDIR" -> directoryFields(block, fields);
            case "XSYM", "XATR" -> {
                List<Field> own = List.of(Field.le("owner", P, 8), Field.le("next block", P + 8, 8),
                        Field.le("index", P + 16, 4), Field.le("bytes", P + 20, 4), Field.le("first byte", P + 24, 1));
                long ino = block.getLong(P);
                own.forEach(field -> fields.add(magic.equals("XSYM") ? field.ownedBy(ino) : field));
            }
            case "JSB1" -> fields.addAll(List.of(Field.le("version", P, 4), Field.le("block size", P + 4, 4),
                    Field.le("journal id", P + 8, 8), Field.le("region start", P + 16, 8),
                    Field.le("region length", P + 24, 8), Field.le("tail position", P + 32, 8),
                    Field.le("tail sequence", P + 40, 8)));
            case "JDSC" -> {
                fields.addAll(List.of(Field.le("journal id", P, 8), Field.le("count", P + 8, 4)));
                for (int i = 0; i < Math.min(block.getInt(P + 8), 64); i++) {
                    fields.add(Field.le("home block " + i, P + 12 + 8 * i, 8));
                }
            }
            case "JCMT" -> fields.addAll(List.of(Field.le("journal id", P, 8), Field.le("descriptors", P + 8, 4),
                    Field.le("data blocks", P + 12, 4), Field.le("checksum of the transaction", P + 16, 4)));
            default -> {
                // Only the header.
            }
        }
        return fields;
    }

    private static void leafHeader(List<Field> fields) {
        fields.addAll(List.of(Field.le("group", P, 4), Field.le("leaf index", P + 4, 4), Field.le("records", P + 8, 4),
                Field.le("reserved", P + 12, 4)));
    }

    private static void extentFields(List<Field> fields, String name, int at) {
        fields.add(Field.le(name + " file block", at, 8));
        fields.add(Field.le(name + " length", at + 8, 8));
        fields.add(Field.le(name + " device block", at + 16, 8));
        fields.add(Field.le(name + " flags", at + 24, 4));
    }

    private static void inodeFields(ByteBuffer block, List<Field> fields) {
        fields.addAll(List.of(Field.le("first inode", P, 8), Field.le("slots", P + 8, 4), Field.le("reserved", P + 12, 4)));
        int slots = Math.min(block.getInt(P + 8), (block.capacity() - P - 16) / INODE_SLOT);
        boolean freeSlotListed = false;
        for (int k = 0; k < slots; k++) {
            int at = P + 16 + INODE_SLOT * k;
            String slot = "slot " + k;
            if (block.get(at) == 0) {
                if (!freeSlotListed) {
                    fields.add(Field.le(slot + " (free) type", at, 1));
                    freeSlotListed = true;
                }
                continue;
            }
            List<Field> own = new ArrayList<>(List.of(Field.le(slot + " type", at, 1),
                    Field.le(slot + " flags", at + 1, 1), Field.le(slot + " mode", at + 2, 2),
                    Field.le(slot + " link count", at + 4, 4), Field.le(slot + " inode number", at + 8, 8),
                    Field.le(slot + " size", at + 16, 8), Field.le(slot + " parent", at + 24, 8),
                    Field.le(slot + " data extents", at + 32, 4), Field.le(slot + " COW extents", at + 36, 4),
                    Field.le(slot + " extent list block", at + 40, 8), Field.le(slot + " uid", at + 48, 4),
                    Field.le(slot + " gid", at + 52, 4)));
            String[] times = {"atime", "mtime", "ctime", "btime"};
            for (int t = 0; t < times.length; t++) {
                own.add(Field.le(slot + " " + times[t] + " seconds", at + 56 + 12 * t, 8));
                own.add(Field.le(slot + " " + times[t] + " nanoseconds", at + 64 + 12 * t, 4));
            }
            own.addAll(List.of(Field.le(slot + " extended-attribute block", at + 104, 8),
                    Field.le(slot + " symlink block", at + 112, 8), Field.le(slot + " reserved", at + 120, 8)));
            if (block.get(at) == 3) {
                long size = block.getLong(at + 16);
                if (block.getLong(at + 112) == 0 && size > 0 && size <= INODE_SLOT - INODE_CORE) {
                    own.add(Field.le(slot + " target first byte", at + INODE_CORE, 1));
                    own.add(Field.le(slot + " target last byte", at + INODE_CORE + (int) size - 1, 1));
                }
            } else if ((block.get(at + 1) & 1) == 0) {
                int extents = Math.min(block.getInt(at + 32) + block.getInt(at + 36), 6);
                for (int e = 0; e < extents; e++) {
                    extentFields(own, slot + " extent " + e, at + INODE_CORE + 28 * e);
                }
            }
            long ino = block.getLong(P) + k;
            own.forEach(field -> fields.add(field.ownedBy(ino)));
        }
    }

    /**
     * A directory block's header and entries. The name bytes of a file's entry belong to that file: a
     * forged name that is still valid (no '/' or NUL) cannot be told from a rename, so it only moves
     * that file. A directory's name bytes are left out (a valid forged name would move its subtree).
     */
    private static void directoryFields(ByteBuffer block, List<Field> fields) {
        fields.addAll(List.of(Field.le("directory inode", P, 8), Field.le("block index", P + 8, 4),
                Field.le("entries", P + 12, 4)));
        int at = P + 16;
        int end = P + block.getInt(4);
        for (int e = 0; e < Math.min(block.getInt(P + 12), 64) && at + 13 <= end; e++) {
            int nameLength = block.getInt(at + 9);
            fields.add(Field.le("entry " + e + " inode", at, 8));
            fields.add(Field.le("entry " + e + " type", at + 8, 1));
            fields.add(Field.le("entry " + e + " name length", at + 9, 4));
            if (block.get(at + 8) == 1 && nameLength > 0 && at + 13 + nameLength <= end) {
                long ino = block.getLong(at);
                fields.add(Field.le("entry " + e + " first name byte", at + 13, 1).ownedBy(ino));
                fields.add(Field.le("entry " + e + " last name byte", at + 12 + nameLength, 1).ownedBy(ino));
            }
            at += 13 + Math.max(nameLength, 0);
        }
    }
}
