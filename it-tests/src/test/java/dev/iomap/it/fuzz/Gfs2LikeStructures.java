package dev.iomap.it.fuzz;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.SuperblockCodec;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The metadata structures of a gfs2-like image and their fields, as adapter-gfs2-like's README and
 * adapter-support's README (journal records) document them: the superblock ({@code SuperblockCodec}
 * frame) in block 0; every block that verifies as a {@code MetadataBlock} written for its own number
 * (resource group headers {@code GRGH}, bitmaps {@code GRBM}, dinodes {@code GDIN}, indirect blocks
 * {@code GIND}, chain blocks {@code GCHN}, and the journals' superblocks {@code JSB1}, descriptors
 * {@code JDSC}, revoke blocks {@code JRVK} and commits {@code JCMT}); the journal blocks that do not
 * (logged images of metadata and of journaled data, stale log space) are "journal log" blocks.
 *
 * <p>Fields that describe one regular file (or one symbolic link) alone are owned by its inode number:
 * every field of its dinode (including its stuffed bytes or block pointers), its indirect blocks, a
 * symbolic link's target chain, and the name bytes of its directory entries (found by walking each
 * directory's entries, stuffed or chained, and kept where an entry's field does not straddle two chain
 * blocks).
 */
final class Gfs2LikeStructures {
    /** Payload offset inside a metadata block. */
    private static final int P = MetadataBlock.HEADER_BYTES;
    /** Payload offset inside the superblock. */
    private static final int S = SuperblockCodec.HEADER_BYTES;
    /** Dinode payload bytes before its stuffed bytes or block pointers. */
    private static final int DINODE_HEADER = 112;
    /** Indirect block payload bytes before its pointers. */
    private static final int INDIRECT_HEADER = 16;
    /** Chain block payload bytes before its data. */
    private static final int CHAIN_HEADER = 20;
    /** Most array entries (pointers, records) listed per structure. */
    private static final int LISTED = 64;

    private final RamBlockDevice image;
    private final int blockSize;
    /** Every block that verifies as a metadata block written for its own number. */
    private final Map<Long, byte[]> metadata = new TreeMap<>();
    /** Fields found by walking other structures (directory entries in chain blocks). */
    private final Map<Long, List<Field>> found = new HashMap<>();
    /** Chain blocks holding a symbolic link's target: block to the link's inode number. */
    private final Map<Long, Long> linkChains = new HashMap<>();
    /** Chain blocks holding directory entries. */
    private final Set<Long> directoryChains = new HashSet<>();

    private Gfs2LikeStructures(RamBlockDevice image, int blockSize) {
        this.image = image;
        this.blockSize = blockSize;
    }

    /**
     * @param image a pristine gfs2-like image
     * @param blockSize its block size
     * @return its structures, in block order
     * @throws IOException if the image cannot be read
     */
    static List<Structure> of(RamBlockDevice image, int blockSize) throws IOException {
        return new Gfs2LikeStructures(image, blockSize).list();
    }

    private List<Structure> list() throws IOException {
        ByteBuffer superblock = ByteBuffer.wrap(image.peek(0, blockSize)).order(ByteOrder.LITTLE_ENDIAN);
        long totalBlocks = superblock.getLong(S + 4);
        long journalEnd = 1 + superblock.getInt(S + 12) * superblock.getLong(S + 16);
        List<Structure> structures = new ArrayList<>();
        structures.add(new Structure("superblock", 0, blockSize, Framing.SUPERBLOCK_CODEC, superblockFields()));
        Set<Long> journalLog = new TreeSet<>();
        for (long block = 1; block < totalBlocks; block++) {
            byte[] bytes = image.peek(block * blockSize, blockSize);
            try {
                MetadataBlock.decodeAnyType(ByteBuffer.wrap(bytes), block);
                metadata.put(block, bytes);
            } catch (CorruptFileSystemException e) {
                if (block < journalEnd) {
                    journalLog.add(block);
                }
            }
        }
        for (Map.Entry<Long, byte[]> entry : metadata.entrySet()) {
            if (magic(entry.getValue()).equals("GDIN")) {
                walkDinode(entry.getKey(), buffer(entry.getValue()));
            }
        }
        for (long block = 1; block < totalBlocks; block++) {
            byte[] bytes = metadata.get(block);
            if (bytes != null) {
                String magic = magic(bytes);
                structures.add(new Structure(magic, block * blockSize, blockSize, Framing.METADATA_BLOCK,
                        fields(block, magic, buffer(bytes))));
            } else if (journalLog.contains(block)) {
                structures.add(new Structure("journal log", block * blockSize, blockSize, Framing.NONE, List.of()));
            }
        }
        return structures;
    }

    private static String magic(byte[] bytes) {
        return new String(bytes, 0, 4, StandardCharsets.US_ASCII);
    }

    private static ByteBuffer buffer(byte[] bytes) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static List<Field> superblockFields() {
        return List.of(Field.le("version", 8, 4), Field.le("payload length", 12, 4),
                Field.le("block size", S, 4), Field.le("total blocks", S + 4, 8), Field.le("journals", S + 12, 4),
                Field.le("blocks per journal", S + 16, 8), Field.le("blocks per resource group", S + 24, 8),
                Field.le("root inode", S + 32, 8), Field.le("label length", S + 40, 4));
    }

    /** Finds what a dinode's chains hold and the fields of a directory's entries. */
    private void walkDinode(long ino, ByteBuffer dinode) {
        int type = dinode.get(P) & 0xff;
        int height = dinode.get(P + 1) & 0xff;
        int contentBytes = dinode.getInt(P + 20);
        if (type == 3 && height > 0) {
            for (long block : chain(dinode.getLong(P + DINODE_HEADER))) {
                linkChains.put(block, ino);
            }
        }
        if (type != 2) {
            return;
        }
        List<long[]> positions = new ArrayList<>();
        if (height == 0) {
            for (int i = 0; i < contentBytes && P + DINODE_HEADER + i < blockSize - 4; i++) {
                positions.add(new long[] {ino, P + DINODE_HEADER + i});
            }
        } else {
            for (long block : chain(dinode.getLong(P + DINODE_HEADER))) {
                directoryChains.add(block);
                int bytes = buffer(metadata.get(block)).getInt(P + 16);
                for (int i = 0; i < bytes && P + CHAIN_HEADER + i < blockSize - 4; i++) {
                    positions.add(new long[] {block, P + CHAIN_HEADER + i});
                }
            }
        }
        entryFields(positions);
    }

    /** @return the blocks of a chain from {@code head}, stopping at anything but a chain block or a loop */
    private List<Long> chain(long head) {
        List<Long> blocks = new ArrayList<>();
        Set<Long> seen = new HashSet<>();
        long block = head;
        while (block != 0 && seen.add(block) && metadata.containsKey(block) && magic(metadata.get(block)).equals("GCHN")) {
            blocks.add(block);
            block = buffer(metadata.get(block)).getLong(P + 8);
        }
        return blocks;
    }

    /**
     * Walks directory entries (u8 type, u64 inode, u16 name length, name) over their byte positions
     * and records the fields that lie in one block. A regular file's or a link's name bytes are its
     * own (a valid forged name is a rename of that file); a directory's are left out (its subtree
     * would move).
     */
    private void entryFields(List<long[]> positions) {
        int at = 0;
        for (int e = 0; e < LISTED && at + 11 <= positions.size(); e++) {
            int type = byteAt(positions, at);
            long ino = 0;
            for (int i = 7; i >= 0; i--) {
                ino = ino << 8 | byteAt(positions, at + 1 + i);
            }
            int nameLength = byteAt(positions, at + 9) | byteAt(positions, at + 10) << 8;
            addIfInOneBlock(positions, at, 1, "entry " + e + " type", -1);
            addIfInOneBlock(positions, at + 1, 8, "entry " + e + " inode", -1);
            addIfInOneBlock(positions, at + 9, 2, "entry " + e + " name length", -1);
            if (type != 2 && nameLength > 0 && at + 11 + nameLength <= positions.size()) {
                addIfInOneBlock(positions, at + 11, 1, "entry " + e + " first name byte", ino);
                addIfInOneBlock(positions, at + 10 + nameLength, 1, "entry " + e + " last name byte", ino);
            }
            at += 11 + nameLength;
        }
    }

    private int byteAt(List<long[]> positions, int index) {
        long[] position = positions.get(index);
        return metadata.get(position[0])[(int) position[1]] & 0xff;
    }

    private void addIfInOneBlock(List<long[]> positions, int from, int width, String name, long owner) {
        if (from + width > positions.size()) {
            return;
        }
        long[] first = positions.get(from);
        long[] last = positions.get(from + width - 1);
        if (first[0] != last[0] || last[1] - first[1] != width - 1) {
            return;
        }
        Field field = Field.le(name, (int) first[1], width);
        found.computeIfAbsent(first[0], k -> new ArrayList<>()).add(owner < 0 ? field : field.ownedBy(owner));
    }

    private List<Field> fields(long block, String magic, ByteBuffer bytes) {
        List<Field> fields = new ArrayList<>(List.of(Field.le("payload length", 4, 4), Field.le("block number", 8, 8),
                Field.le("sequence", 16, 8)));
        switch (magic) {
            case "GRGH" -> fields.addAll(List.of(Field.le("group index", P, 4), Field.le("bitmap blocks", P + 4, 4),
                    Field.le("first block", P + 8, 8), Field.le("length", P + 16, 8),
                    Field.le("free blocks", P + 24, 8), Field.le("dinodes", P + 32, 8)));
            case "GRBM" -> {
                fields.addAll(List.of(Field.le("group index", P, 4), Field.le("first block described", P + 4, 8)));
                int bitmapBytes = bytes.getInt(4) - 12;
                for (int i : new TreeSet<>(List.of(0, 1, 2, 4, 8, 16, 32, 64, bitmapBytes / 2, bitmapBytes - 1))) {
                    if (i >= 0 && i < bitmapBytes) {
                        fields.add(Field.le("bitmap byte " + i, P + 12 + i, 1));
                    }
                }
            }
            case "GDIN" -> dinodeFields(block, bytes)
                    .forEach(field -> fields.add(field.owner() >= 0 ? field : field.ownedBy(block)));
            case "GIND" -> {
                List<Field> own = new ArrayList<>(List.of(Field.le("level", P, 4), Field.le("zero", P + 4, 4),
                        Field.le("owner", P + 8, 8)));
                pointerFields(own, bytes, P + INDIRECT_HEADER, (blockSize - P - 4 - INDIRECT_HEADER) / 8);
                long owner = bytes.getLong(P + 8);
                own.forEach(field -> fields.add(field.ownedBy(owner)));
            }
            case "GCHN" -> chainFields(block, bytes, fields);
            case "JSB1" -> fields.addAll(List.of(Field.le("version", P, 4), Field.le("block size", P + 4, 4),
                    Field.le("journal id", P + 8, 8), Field.le("region start", P + 16, 8),
                    Field.le("region length", P + 24, 8), Field.le("tail position", P + 32, 8),
                    Field.le("tail sequence", P + 40, 8)));
            case "JDSC", "JRVK" -> {
                fields.addAll(List.of(Field.le("journal id", P, 8), Field.le("count", P + 8, 4)));
                for (int i = 0; i < Math.min(bytes.getInt(P + 8), LISTED) && P + 20 + 8 * i <= blockSize - 4; i++) {
                    fields.add(Field.le((magic.equals("JDSC") ? "home block " : "revoked block ") + i, P + 12 + 8 * i, 8));
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

    private List<Field> dinodeFields(long ino, ByteBuffer bytes) {
        List<Field> fields = new ArrayList<>(List.of(Field.le("type", P, 1), Field.le("height", P + 1, 1),
                Field.le("flags", P + 2, 2), Field.le("mode", P + 4, 4), Field.le("uid", P + 8, 4),
                Field.le("gid", P + 12, 4), Field.le("link count", P + 16, 4), Field.le("content bytes", P + 20, 4),
                Field.le("size", P + 24, 8), Field.le("blocks held", P + 32, 8), Field.le("parent", P + 40, 8),
                Field.le("extended-attribute chain", P + 48, 8), Field.le("extended-attribute bytes", P + 56, 4),
                Field.le("zero", P + 60, 4)));
        String[] times = {"atime", "mtime", "ctime", "btime"};
        for (int t = 0; t < times.length; t++) {
            fields.add(Field.le(times[t] + " seconds", P + 64 + 12 * t, 8));
            fields.add(Field.le(times[t] + " nanoseconds", P + 72 + 12 * t, 4));
        }
        int type = bytes.get(P) & 0xff;
        int height = bytes.get(P + 1) & 0xff;
        int data = P + DINODE_HEADER;
        int stuffedCapacity = blockSize - 4 - data;
        if (height > 0) {
            pointerFields(fields, bytes, data, stuffedCapacity / 8);
        } else if (type == 1 || type == 3) {
            long length = type == 1 ? bytes.getLong(P + 24) : bytes.getInt(P + 20);
            if (length > 0 && length <= stuffedCapacity) {
                fields.add(Field.le((type == 1 ? "stuffed data" : "target") + " first byte", data, 1));
                fields.add(Field.le((type == 1 ? "stuffed data" : "target") + " last byte", data + (int) length - 1, 1));
            }
        } else {
            fields.addAll(found.getOrDefault(ino, List.of()));
        }
        return fields;
    }

    /** The non-zero block pointers (up to {@link #LISTED}) and the first hole. */
    private static void pointerFields(List<Field> fields, ByteBuffer bytes, int from, int count) {
        boolean holeListed = false;
        int listed = 0;
        for (int i = 0; i < count && listed < LISTED; i++) {
            boolean hole = bytes.getLong(from + 8 * i) == 0;
            if (hole && holeListed) {
                continue;
            }
            holeListed |= hole;
            fields.add(Field.le("pointer " + i + (hole ? " (hole)" : ""), from + 8 * i, 8));
            listed++;
        }
    }

    private void chainFields(long block, ByteBuffer bytes, List<Field> fields) {
        Long link = linkChains.get(block);
        List<Field> own = new ArrayList<>(List.of(Field.le("owner", P, 8), Field.le("next chain block", P + 8, 8),
                Field.le("bytes here", P + 16, 4)));
        int length = bytes.getInt(P + 16);
        if (directoryChains.contains(block)) {
            own.addAll(found.getOrDefault(block, List.of()));
        } else if (length > 0 && P + CHAIN_HEADER + length <= blockSize - 4) {
            own.add(Field.le("first data byte", P + CHAIN_HEADER, 1));
            own.add(Field.le("last data byte", P + CHAIN_HEADER + length - 1, 1));
        }
        for (Field field : own) {
            fields.add(link == null || field.owner() >= 0 ? field : field.ownedBy(link));
        }
    }
}
