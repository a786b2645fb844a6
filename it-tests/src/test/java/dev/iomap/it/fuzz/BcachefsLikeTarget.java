package dev.iomap.it.fuzz;

import dev.iomap.adapter.support.Crc32c;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * bcachefs-like on one geometry. Its structures are the ones adapter-bcachefs-like's README documents:
 * the two superblock copies (the first 128 bytes of blocks 0 and 1, CRC32C with its own field taken as
 * zero), the journal ring's batch headers (other ring blocks are "journal log": entries, stale or not,
 * checked by their own CRCs) and every B-tree node reachable from the newer superblock (CRC32C of bytes
 * 8 to the block's end). A node's fields are its header's and those of each entry: the key, and a
 * leaf's value by btree (allocation run, config, inode, directory entry, extent); an inode's fields and
 * its extents' are that file's own.
 *
 * <p>A journal batch is one structure of all its blocks: its header's fields and, for each of its first
 * entries, the entry's header fields and those of its first ops (type, key or block run, value length or delta),
 * every entry's CRC32C and then the header's recomputed after a forgery, so that only replay's
 * structural checks can catch it. On a cleanly unmounted image every batch is stale (replay starts after
 * them); the crash image ({@code b1k-crashed}) is taken mounted after a sync, right after a checkpoint
 * was forced with attribute updates (which the fuzzer's file tree does not see), and then one file
 * block overwritten (an extent key and two reference changes, written back as one transaction): its
 * live batches are that last transaction ({@link #lastTransactionBlocks}), whose damage may roll the
 * mount back to the file's old byte.
 *
 * <p>Every data extent is checksummed (crc32c or xxhash64) unless the format says {@code checksum=none}:
 * a damaged data block then fails the read of its whole extent, and so of its file, with a one-line
 * error, instead of changing bytes ({@link Outcome#CHECKSUM_FAILED_IN_FLIPPED_FILE_ONLY}). Compressed
 * data cannot be recognised by content, so the owners of every data block come from the extent keys
 * ({@link #extentOwners}).
 */
final class BcachefsLikeTarget extends FuzzTarget {
    /** The superblock's bytes. */
    private static final int SUPERBLOCK = 128;
    private static final long SUPERBLOCK_MAGIC = 0x31524f5453484342L;
    private static final int NODE_MAGIC = 0x4e484342;
    private static final int BATCH_MAGIC = 0x4a484342;
    private static final int NODE_HEADER = 32;
    private static final int KEY = 17;
    private static final int ALLOC = 0;
    private static final int CONFIG = 1;
    private static final int INODES = 2;
    private static final int DIRENTS = 3;
    private static final int XATTRS = 4;
    private static final int EXTENTS = 6;
    private static final int BATCH_HEADER = 32;
    private static final int ENTRY_HEADER = 28;
    /** Journal entries whose fields are listed, per batch. */
    private static final int MAX_JOURNAL_ENTRIES = 16;
    /** Ops whose fields are listed, per journal entry. */
    private static final int MAX_OPS = 16;
    /** The one-block file whose first byte a crash image's last transaction overwrites (a new extent). */
    private static final String LAST_FILE = "/one";
    /** Fields listed per node, at most (as xfs-like's records). */
    private static final int MAX_ENTRIES = 64;

    /** Superblock copy 0's bytes 0..127 with the checksum at 8 computed over them with the field as zero. */
    private static final Framing SUPERBLOCK_FRAMING = bytes -> {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(8, 0);
        buffer.putInt(8, Crc32c.of(bytes, 0, SUPERBLOCK));
    };
    /** A node: CRC32C of bytes 8 to the block's end, at 4. */
    private static final Framing NODE_FRAMING = bytes -> ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
            .putInt(4, Crc32c.of(bytes, 8, bytes.length - 8));
    /**
     * A journal batch (all its blocks): each entry's CRC32C of its bytes 8..length-1 at 4, walking the
     * entries by their length fields inside the header's entry bytes, then the header's CRC32C of bytes
     * 8..31 at 4.
     */
    private static final Framing BATCH_FRAMING = bytes -> {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long end = Math.min(bytes.length, BATCH_HEADER + Math.max(0L, buffer.getInt(24) & 0xffffffffL));
        int at = BATCH_HEADER;
        while (at + ENTRY_HEADER <= end) {
            int length = buffer.getInt(at);
            if (length < ENTRY_HEADER || length > end - at) {
                break;
            }
            buffer.putInt(at + 4, Crc32c.of(bytes, at + 8, length - 8));
            at += length;
        }
        buffer.putInt(4, Crc32c.of(bytes, 8, 24));
    };

    private final long capacity;
    private final Map<String, String> properties;
    private final boolean crashImage;
    /** The image {@link #newImage} made last: a crash image's populate watches its superblocks. */
    private RamBlockDevice building;

    /**
     * @param label the geometry's short name
     * @param blockSize filesystem and device block size (bcachefs-like requires them equal)
     * @param capacity the image's bytes
     * @param properties format properties ({@code checksum}, {@code compression}, {@code extentmax}...)
     * @param mountGeometry the page-cache geometry of every mount
     * @param crashImage whether the image is taken mounted, its last transaction live in the journal
     */
    BcachefsLikeTarget(String label, int blockSize, long capacity, Map<String, String> properties,
            Geometry mountGeometry, boolean crashImage) {
        super("bcachefs-like", label, blockSize, mountGeometry);
        this.capacity = capacity;
        this.properties = Map.copyOf(properties);
        this.crashImage = crashImage;
    }

    @Override
    RamBlockDevice newImage() {
        building = new RamBlockDevice(blockSize(), capacity);
        return building;
    }

    @Override
    boolean crashImage() {
        return crashImage;
    }

    /**
     * The blocks of every live batch (first sequence after the newer superblock's checkpoint): the
     * overwrite and at most the attribute update before it, which no file shows.
     */
    @Override
    java.util.Set<Long> lastTransactionBlocks(RamBlockDevice image, ImageMap map) throws IOException {
        if (!crashImage) {
            return java.util.Set.of();
        }
        long checkpointSeq = newestSuperblock(image).getLong(80);
        java.util.Set<Long> blocks = new java.util.TreeSet<>();
        for (Structure structure : map.structures()) {
            if (structure.type().equals("journal batch")) {
                ByteBuffer header = ByteBuffer.wrap(image.peek(structure.offset(), BATCH_HEADER))
                        .order(ByteOrder.LITTLE_ENDIAN);
                if (header.getLong(16) > checkpointSeq) {
                    long first = structure.offset() / blockSize();
                    for (long block = first; block < first + structure.length() / blockSize(); block++) {
                        blocks.add(block);
                    }
                }
            }
        }
        if (blocks.isEmpty()) {
            throw new IllegalStateException(this + ": the crash image's journal holds no live batch");
        }
        return blocks;
    }

    @Override
    FormatOptions formatOptions() {
        return new FormatOptions(blockSize(), "fuzz", properties);
    }

    @Override
    boolean checksumsData() {
        return !"none".equals(properties.get("checksum"));
    }

    /** Its mount runs fsck's checks (issue 36): what fsck flags is refused at mount. */
    @Override
    boolean mountRefusesWhatFsckFlags() {
        return true;
    }

    @Override
    void populate(IomapFileSystem fs) throws IOException {
        NamespaceImages.populate(fs, blockSize(), true);
        NewInodeAttributes owner = new NewInodeAttributes(0640, 1000, 100);
        fs.createLink("/d1/hard", "/one");
        fs.createSymbolicLink("/link", "absent", owner);
        fs.createSymbolicLink("/d1/longlink", "sub/../".repeat(100) + "../absent", owner);
        fs.setXattr("/one", "user.small", "value".getBytes(StandardCharsets.US_ASCII), XattrMode.CREATE);
        fs.setXattr("/d1", "trusted.big", TestData.pattern(FuzzTarget.seedOf("/d1"), 0, 1000), XattrMode.CREATE);
        fs.setAttributes("/d1/mid", AttributeChange.none().withMode(04755).withUid(7).withGid(8)
                .withAtime(Instant.ofEpochSecond(-1_000_000_000L, 999_999_999)).withMtime(Instant.ofEpochSecond(1)));
        fs.sync();
        if (crashImage) {
            long sequence = newestSuperblock(building).getLong(16);
            for (int i = 0; newestSuperblock(building).getLong(16) == sequence; i++) {
                if (i == 10_000) {
                    throw new IllegalStateException(this + ": no checkpoint after " + i + " attribute updates");
                }
                fs.setXattr("/one", "user.filler", ("update " + i).getBytes(StandardCharsets.US_ASCII), XattrMode.ANY);
                fs.sync();
            }
            try (IomapFile file = fs.open(LAST_FILE)) {
                file.write(0, ByteBuffer.wrap(new byte[] {'X'}));
            }
            fs.sync();
        }
    }

    @Override
    Workload workload(FileTree original) {
        return NamespaceImages.workload(original, blockSize());
    }

    @Override
    List<Structure> structures(RamBlockDevice image) throws IOException {
        List<Structure> structures = new ArrayList<>();
        ByteBuffer newest = null;
        for (int copy = 0; copy < 2; copy++) {
            ByteBuffer sb = superblock(image, copy);
            if (sb.getLong(0) != SUPERBLOCK_MAGIC) {
                continue;
            }
            structures.add(new Structure("superblock", (long) copy * blockSize(), SUPERBLOCK, SUPERBLOCK_FRAMING,
                    superblockFields(crashImage)));
            if (newest == null || sb.getLong(16) > newest.getLong(16)) {
                newest = sb;
            }
        }
        long journalStart = newest.getLong(40);
        long journalEnd = journalStart + newest.getLong(48);
        for (long block = journalStart; block < journalEnd; block++) {
            ByteBuffer bytes = block(image, block);
            boolean header = bytes.getInt(0) == BATCH_MAGIC && bytes.getInt(4) == Crc32c.of(bytes, 8, 24);
            int blocks = header ? bytes.getInt(28) : 0;
            if (blocks >= 1 && blocks <= journalEnd - block) {
                ByteBuffer batch = ByteBuffer.wrap(image.peek(block * blockSize(), blocks * blockSize()))
                        .order(ByteOrder.LITTLE_ENDIAN);
                structures.add(new Structure("journal batch", block * blockSize(), blocks * blockSize(),
                        BATCH_FRAMING, batchFields(batch)));
                block += blocks - 1;
            } else {
                structures.add(new Structure("journal log", block * blockSize(), blockSize(), Framing.NONE, List.of()));
            }
        }
        Map<Long, Long> regularFiles = regularFiles(image, newest);
        walk(image, newest.getLong(64), newest.getInt(72), regularFiles, structures);
        return structures;
    }

    /**
     * The superblock's documented fields. A crash image's leave out the three that locate replay (nonce,
     * checkpoint seq, journal tail): the format has nothing to check them against, so a forged one with
     * its CRC recomputed makes replay find no live batch and drop the committed transactions silently
     * (adapter-bcachefs-like's README, known limits). A cleanly unmounted image has no live batch, so
     * there they are forged like the others.
     */
    private static List<Field> superblockFields(boolean crashImage) {
        List<Field> fields = new ArrayList<>(List.of(Field.le("version", 12, 4), Field.le("sequence", 16, 8),
                Field.le("block size", 24, 4), Field.le("device blocks", 32, 8), Field.le("first journal block", 40, 8),
                Field.le("journal blocks", 48, 8), Field.le("root node block", 64, 8), Field.le("root level", 72, 4),
                Field.le("free blocks", 96, 8), Field.le("node blocks", 104, 8)));
        if (!crashImage) {
            fields.addAll(List.of(Field.le("nonce", 56, 8), Field.le("checkpoint seq", 80, 8),
                    Field.le("journal tail", 88, 8)));
        }
        return fields;
    }

    /** The header's fields and those of the first entries: header, first ops. */
    private static List<Field> batchFields(ByteBuffer batch) {
        List<Field> fields = new ArrayList<>(List.of(Field.le("nonce", 8, 8), Field.le("first sequence", 16, 8),
                Field.le("entry bytes", 24, 4), Field.le("blocks", 28, 4)));
        long end = Math.min(batch.capacity(), BATCH_HEADER + (batch.getInt(24) & 0xffffffffL));
        int at = BATCH_HEADER;
        for (int i = 0; i < MAX_JOURNAL_ENTRIES && at + ENTRY_HEADER <= end; i++) {
            int length = batch.getInt(at);
            if (length < ENTRY_HEADER || length > end - at) {
                break;
            }
            String name = "journal entry " + i;
            fields.addAll(List.of(Field.le(name + " length", at, 4), Field.le(name + " nonce", at + 8, 8),
                    Field.le(name + " sequence", at + 16, 8), Field.le(name + " op count", at + 24, 4)));
            int op = at + ENTRY_HEADER;
            int ops = batch.getInt(at + 24);
            for (int k = 0; k < Math.min(ops, MAX_OPS) && op < at + length; k++) {
                String prefix = name + " op " + k;
                fields.add(Field.le(prefix + " type", op, 1));
                int type = batch.get(op);
                List<Field> opFields = switch (type) {
                    case 1, 2 -> List.of(Field.le(prefix + " btree", op + 1, 1), Field.le(prefix + " inode", op + 2, 8),
                            Field.le(prefix + " offset", op + 10, 8));
                    case 3 -> List.of(Field.le(prefix + " first block", op + 1, 8),
                            Field.le(prefix + " block count", op + 9, 8), Field.le(prefix + " delta", op + 17, 4));
                    default -> List.<Field>of();
                };
                for (Field field : opFields) {
                    if (field.fits(at + length)) {
                        fields.add(field);
                    }
                }
                if (type == 1 && op + 20 <= at + length) {
                    fields.add(Field.le(prefix + " value length", op + 18, 2));
                    op += 20 + (batch.getShort(op + 18) & 0xffff);
                } else if (type == 2) {
                    op += 18;
                } else if (type == 3) {
                    op += 21;
                } else {
                    break;
                }
            }
            at += length;
        }
        return fields;
    }

    /** Adds every node reachable from {@code block} (children after their parent). */
    private void walk(RamBlockDevice image, long block, int level, Map<Long, Long> regularFiles,
            List<Structure> out) throws IOException {
        ByteBuffer node = block(image, block);
        if (node.getInt(0) != NODE_MAGIC) {
            return;
        }
        List<Field> fields = new ArrayList<>(List.of(Field.le("block number", 8, 8), Field.le("sequence", 16, 8),
                Field.le("level", 24, 1), Field.le("entry count", 26, 2), Field.le("entry bytes", 28, 4)));
        List<Long> children = new ArrayList<>();
        int count = node.getShort(26) & 0xffff;
        int at = NODE_HEADER;
        for (int i = 0; i < count && at + KEY <= blockSize(); i++) {
            int btree = node.get(at) & 0xff;
            long inode = node.getLong(at + 1);
            String name = "entry " + i;
            long owner = level == 0 && btree == EXTENTS && regularFiles.containsKey(inode) ? inode : -1;
            if (i < MAX_ENTRIES) {
                for (Field field : List.of(Field.le(name + " btree", at, 1), Field.le(name + " inode", at + 1, 8),
                        Field.le(name + " offset", at + 9, 8))) {
                    fields.add(owner >= 0 ? field.ownedBy(owner) : field);
                }
            }
            if (level > 0) {
                if (i < MAX_ENTRIES) {
                    fields.add(Field.le(name + " child block", at + KEY, 8));
                }
                children.add(node.getLong(at + KEY));
                at += KEY + 8;
                continue;
            }
            int length = node.getShort(at + KEY) & 0xffff;
            if (i < MAX_ENTRIES) {
                fields.add(Field.le(name + " value length", at + KEY, 2));
                valueFields(name, btree, inode, node, at + KEY + 2, length, regularFiles, fields);
            }
            at += KEY + 2 + length;
        }
        out.add(new Structure("BCHN", block * blockSize(), blockSize(), NODE_FRAMING, fields));
        for (long child : children) {
            walk(image, child, level - 1, regularFiles, out);
        }
    }

    /** The documented fields of a leaf value, by its btree; an inode's and an extent's are its file's own. */
    private static void valueFields(String name, int btree, long inode, ByteBuffer node, int at, int length,
            Map<Long, Long> regularFiles, List<Field> fields) {
        List<Field> value = switch (btree) {
            case ALLOC -> List.of(Field.le(name + " run length", at, 8), Field.le(name + " run count", at + 8, 4));
            case CONFIG -> length == 24 ? List.of(Field.le(name + " version", at, 4),
                    Field.le(name + " checksum type", at + 4, 4), Field.le(name + " compression", at + 8, 4),
                    Field.le(name + " extentmax", at + 12, 4), Field.le(name + " nocow", at + 16, 1),
                    Field.le(name + " journal blocks", at + 20, 4))
                    : List.of(Field.le(name + " next inode", at, 8), Field.le(name + " inodes in use", at + 8, 8));
            case INODES -> List.of(Field.le(name + " type", at, 1), Field.le(name + " mode", at + 2, 2),
                    Field.le(name + " uid", at + 4, 4), Field.le(name + " gid", at + 8, 4),
                    Field.le(name + " link count", at + 12, 4), Field.le(name + " size", at + 16, 8),
                    Field.le(name + " mtime", at + 32, 8), Field.le(name + " flags", at + 56, 4),
                    Field.le(name + " generation", at + 60, 8), Field.le(name + " parent", at + 68, 8),
                    Field.le(name + " live blocks", at + 76, 8));
            case DIRENTS -> direntFields(name, node, at, length, regularFiles);
            case EXTENTS -> List.of(Field.le(name + " device block", at, 8), Field.le(name + " physical blocks", at + 8, 4),
                    Field.le(name + " stored bytes", at + 12, 4), Field.le(name + " offset", at + 16, 4),
                    Field.le(name + " logical blocks", at + 20, 4), Field.le(name + " uncompressed blocks", at + 24, 4),
                    Field.le(name + " checksum type", at + 28, 1), Field.le(name + " compression", at + 29, 1),
                    Field.le(name + " checksum", at + 32, 8));
            case XATTRS -> node.getLong(at - KEY - 2 + 9) == 0
                    ? List.of(Field.le(name + " attribute count", at, 4), Field.le(name + " first name length", at + 4, 1),
                            Field.le(name + " first value length", at + 5, 4))
                    : List.of(Field.le(name + " first chunk byte", at, 1));
            default -> length > 0 ? List.of(Field.le(name + " first value byte", at, 1)) : List.<Field>of();
        };
        boolean own = (btree == INODES || btree == EXTENTS) && regularFiles.containsKey(inode);
        for (Field field : value) {
            if (field.fits(at + length)) {
                fields.add(own ? field.ownedBy(inode) : field);
            }
        }
    }

    /** An entry's target, type and name length; a regular file's name bytes belong to that file. */
    private static List<Field> direntFields(String name, ByteBuffer node, int at, int length,
            Map<Long, Long> regularFiles) {
        List<Field> fields = new ArrayList<>(List.of(Field.le(name + " target inode", at, 8),
                Field.le(name + " type", at + 8, 1), Field.le(name + " name length", at + 9, 1)));
        if (length > 10) {
            long target = node.getLong(at);
            List<Field> bytes = List.of(Field.le(name + " first name byte", at + 10, 1),
                    Field.le(name + " last name byte", at + length - 1, 1));
            for (Field field : bytes) {
                fields.add(regularFiles.containsKey(target) ? field.ownedBy(target) : field);
            }
        }
        return fields;
    }

    /**
     * The owners of every data block, from the extent keys: a block of an extent stored as is holds
     * the one file block it maps; a block of a checksummed or compressed extent holds all of the key's
     * file blocks (its damage fails, or changes, the read of the whole extent).
     */
    @Override
    Map<Long, List<ImageMap.Owner>> extentOwners(RamBlockDevice image, FileTree tree) throws IOException {
        Map<Long, List<String>> paths = new HashMap<>();
        tree.nodes().forEach((path, node) -> {
            if (!node.isDirectory()) {
                paths.computeIfAbsent(node.ino(), k -> new ArrayList<>()).add(path);
            }
        });
        Map<Long, List<ImageMap.Owner>> owners = new HashMap<>();
        for (Leaf leaf : leaves(image, newestSuperblock(image))) {
            if (leaf.btree() != EXTENTS || leaf.value().length != 40) {
                continue;
            }
            ByteBuffer v = ByteBuffer.wrap(leaf.value()).order(ByteOrder.LITTLE_ENDIAN);
            long devStart = v.getLong(0);
            int physical = v.getInt(8);
            int offset = v.getInt(16);
            int logical = v.getInt(20);
            boolean asIs = v.get(28) == 0 && v.get(29) == 0;
            long end = leaf.offset();
            for (String path : paths.getOrDefault(leaf.inode(), List.of())) {
                for (int k = 0; k < logical; k++) {
                    long fileBlock = end - logical + k;
                    if (asIs) {
                        owners.computeIfAbsent(devStart + offset + k, b -> new ArrayList<>())
                                .add(new ImageMap.Owner(path, fileBlock));
                        continue;
                    }
                    for (long b = devStart; b < devStart + physical; b++) {
                        owners.computeIfAbsent(b, x -> new ArrayList<>()).add(new ImageMap.Owner(path, fileBlock));
                    }
                }
            }
        }
        return owners;
    }

    /** A leaf entry: key and value. */
    private record Leaf(int btree, long inode, long offset, byte[] value) {
    }

    /** @return the inode numbers of regular files (type 1), each with itself */
    private Map<Long, Long> regularFiles(RamBlockDevice image, ByteBuffer superblock) throws IOException {
        Map<Long, Long> files = new HashMap<>();
        for (Leaf leaf : leaves(image, superblock)) {
            if (leaf.btree() == INODES && leaf.value().length > 0 && leaf.value()[0] == 1) {
                files.put(leaf.inode(), leaf.inode());
            }
        }
        return files;
    }

    private List<Leaf> leaves(RamBlockDevice image, ByteBuffer superblock) throws IOException {
        List<Leaf> out = new ArrayList<>();
        collect(image, superblock.getLong(64), superblock.getInt(72), out);
        return out;
    }

    private void collect(RamBlockDevice image, long block, int level, List<Leaf> out) throws IOException {
        ByteBuffer node = block(image, block);
        int count = node.getShort(26) & 0xffff;
        int at = NODE_HEADER;
        for (int i = 0; i < count; i++) {
            if (level > 0) {
                collect(image, node.getLong(at + KEY), level - 1, out);
                at += KEY + 8;
                continue;
            }
            int length = node.getShort(at + KEY) & 0xffff;
            byte[] value = new byte[length];
            node.get(at + KEY + 2, value);
            out.add(new Leaf(node.get(at) & 0xff, node.getLong(at + 1), node.getLong(at + 9), value));
            at += KEY + 2 + length;
        }
    }

    private ByteBuffer newestSuperblock(RamBlockDevice image) throws IOException {
        ByteBuffer first = superblock(image, 0);
        ByteBuffer second = superblock(image, 1);
        if (second.getLong(0) != SUPERBLOCK_MAGIC) {
            return first;
        }
        return first.getLong(0) != SUPERBLOCK_MAGIC || second.getLong(16) > first.getLong(16) ? second : first;
    }

    private ByteBuffer superblock(RamBlockDevice image, int copy) throws IOException {
        return ByteBuffer.wrap(image.peek((long) copy * blockSize(), SUPERBLOCK)).order(ByteOrder.LITTLE_ENDIAN);
    }

    private ByteBuffer block(RamBlockDevice image, long block) throws IOException {
        return ByteBuffer.wrap(image.peek(block * blockSize(), blockSize())).order(ByteOrder.LITTLE_ENDIAN);
    }
}
