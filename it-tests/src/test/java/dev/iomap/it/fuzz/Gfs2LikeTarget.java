package dev.iomap.it.fuzz;

import dev.iomap.adapter.support.SuperblockCodec;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.FileFlag;
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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * gfs2-like on one geometry (its structures: {@link Gfs2LikeStructures}). Besides the namespace
 * images' files (no clones: gfs2-like has none), the image holds what gfs2-like stores its own way: a
 * hard link, a symbolic link stuffed in its dinode and one whose target fills a chain (both dangling, so
 * that what reads through them depends on their own metadata only), extended attributes (a small one and
 * one over several chain blocks), a file with every attribute set, a directory {@code /wide} whose
 * entries spill from its dinode into a chain of two blocks, a file {@code /deep} whose tree has height
 * 2 (and 3 where that fits under the fuzzer's read limit: 512-byte blocks), and journaled data: the
 * directory {@code /j} carries the journaled-data flag, which its files inherit (a stuffed one and one
 * of several blocks).
 *
 * <p>The fuzzer mounts every mutant with the same options (the geometry's), so the {@code data=journal}
 * mount option is not reachable here; journaled data is exercised through the per-file flag instead.
 * With {@code jdataWorkload}, {@code /w} and its append and overwrite files carry the flag before the
 * image is taken, so that the workload on every mutant writes journaled data (new files under {@code /w}
 * inherit it).
 *
 * <p>A crash image is taken mounted after two more syncs: one committing a journaled file
 * {@code /j/gone}, then one that creates {@code /j/tail}, unlinks {@code /j/gone} and truncates
 * {@code /j/data}: its last transaction revokes the freed blocks whose images the journal still holds
 * ({@code JRVK} blocks), so the mutants damage live descriptors, logged metadata and data images,
 * revoke blocks and commits.
 */
final class Gfs2LikeTarget extends FuzzTarget {
    private static final int S = SuperblockCodec.HEADER_BYTES;
    private static final Set<FileFlag> JDATA = Set.of(FileFlag.JOURNAL_DATA);

    private final long capacity;
    private final Map<String, String> properties;
    private final boolean crashImage;
    private final boolean jdataWorkload;

    /**
     * @param label the geometry's short name
     * @param blockSize filesystem and device block size (gfs2-like requires them equal)
     * @param capacity the image's bytes
     * @param properties format properties ({@code journals}, {@code journalblocks}, {@code rgblocks})
     * @param mountGeometry the page-cache geometry of every mount
     * @param crashImage whether the image is taken mounted, its journal holding live transactions
     * @param jdataWorkload whether the workload's files under {@code /w} carry the journaled-data flag
     */
    Gfs2LikeTarget(String label, int blockSize, long capacity, Map<String, String> properties, Geometry mountGeometry,
            boolean crashImage, boolean jdataWorkload) {
        super("gfs2-like", label, blockSize, mountGeometry);
        this.capacity = capacity;
        this.properties = Map.copyOf(properties);
        this.crashImage = crashImage;
        this.jdataWorkload = jdataWorkload;
    }

    @Override
    RamBlockDevice newImage() {
        return new RamBlockDevice(blockSize(), capacity);
    }

    @Override
    FormatOptions formatOptions() {
        return new FormatOptions(blockSize(), "fuzz", properties);
    }

    @Override
    boolean crashImage() {
        return crashImage;
    }

    @Override
    void populate(IomapFileSystem fs) throws IOException {
        int blockSize = blockSize();
        NamespaceImages.populate(fs, blockSize, false);
        NewInodeAttributes owner = new NewInodeAttributes(0640, 1000, 100);
        fs.createLink("/d1/hard", "/one");
        fs.createSymbolicLink("/link", "absent", owner);
        int stuffed = blockSize - 140;
        fs.createSymbolicLink("/d1/longlink", "sub/../".repeat(Math.min(stuffed / 7 + 1, 580)) + "../absent", owner);
        fs.setXattr("/one", "user.small", "value".getBytes(StandardCharsets.US_ASCII), XattrMode.CREATE);
        fs.setXattr("/d1", "trusted.big", TestData.pattern(FuzzTarget.seedOf("/d1"), 0, 5000), XattrMode.CREATE);
        fs.setAttributes("/d1/mid", AttributeChange.none().withMode(04755).withUid(7).withGid(8)
                .withAtime(Instant.ofEpochSecond(-1_000_000_000L, 999_999_999)).withMtime(Instant.ofEpochSecond(1)));
        fs.mkdir("/wide");
        for (int i = 0; i < (blockSize - 48) / 38 + 2; i++) {
            // 11 + 27 bytes an entry: the entries outgrow the dinode and fill more than one chain block.
            FuzzTarget.file(fs, String.format("/wide/entry-%03d-with-a-long-name", i), 0);
        }
        deep(fs);
        fs.mkdir("/j");
        fs.setFileFlags("/j", JDATA);
        FuzzTarget.file(fs, "/j/stuffed", 100);
        FuzzTarget.file(fs, "/j/data", 3 * blockSize + 7);
        if (jdataWorkload) {
            fs.setFileFlags("/w", JDATA);
            fs.setFileFlags("/w/append", JDATA);
            fs.setFileFlags("/w/overwrite", JDATA);
        }
        fs.sync();
        if (crashImage) {
            FuzzTarget.file(fs, "/j/gone", 2 * blockSize + 9);
            fs.sync();
            FuzzTarget.file(fs, "/j/tail", blockSize + 3);
            fs.unlink("/j/gone");
            try (IomapFile file = fs.open("/j/data")) {
                file.truncate(blockSize + 1);
            }
            fs.sync();
        }
    }

    /**
     * A file with one block past the dinode's pointers (height 2) and, where the file stays under the
     * fuzzer's read limit, one past what height 2 addresses (height 3).
     */
    private void deep(IomapFileSystem fs) throws IOException {
        long pointers = (blockSize() - 140L) / 8;
        long perIndirect = (blockSize() - 44L) / 8;
        long seed = FuzzTarget.seedOf("/deep");
        try (IomapFile file = fs.create("/deep")) {
            for (long block : List.of(0L, pointers + 1, pointers * perIndirect + 1)) {
                long offset = block * blockSize();
                if (offset + blockSize() <= FileTree.MAX_READ / 2) {
                    file.write(offset, TestData.buffer(seed, offset, blockSize()));
                }
            }
        }
    }

    @Override
    Workload workload(FileTree original) {
        return NamespaceImages.workload(original, blockSize());
    }

    @Override
    List<Structure> structures(RamBlockDevice image) throws IOException {
        return Gfs2LikeStructures.of(image, blockSize());
    }

    /**
     * Journal 0's log positions from the first descriptor (or revoke block) of its newest transaction
     * to its commit: walking back from the newest commit over logged images and that transaction's own
     * descriptors and revoke blocks.
     */
    @Override
    Set<Long> lastTransactionBlocks(RamBlockDevice image, ImageMap map) throws IOException {
        if (!crashImage) {
            return Set.of();
        }
        ByteBuffer superblock = ByteBuffer.wrap(image.peek(0, blockSize())).order(ByteOrder.LITTLE_ENDIAN);
        long journalBlocks = superblock.getLong(S + 16);
        long logStart = 2;
        long logBlocks = journalBlocks - 1;
        long newest = -1;
        long commit = -1;
        for (long block = logStart; block < logStart + logBlocks; block++) {
            Structure structure = map.structureAt(block);
            long sequence = sequence(image, block);
            if (structure != null && structure.type().equals("JCMT") && sequence > newest) {
                newest = sequence;
                commit = block;
            }
        }
        if (commit < 0) {
            return Set.of();
        }
        Set<Long> blocks = new TreeSet<>(List.of(commit));
        long block = commit;
        while (blocks.size() < logBlocks) {
            block = logStart + Math.floorMod(block - 1 - logStart, logBlocks);
            Structure structure = map.structureAt(block);
            String type = structure == null ? "" : structure.type();
            boolean own = (type.equals("JDSC") || type.equals("JRVK")) && sequence(image, block) == newest;
            if (!own && !type.equals("journal log")) {
                return blocks;
            }
            blocks.add(block);
        }
        return blocks;
    }

    private long sequence(RamBlockDevice image, long block) throws IOException {
        return ByteBuffer.wrap(image.peek(block * blockSize(), 24)).order(ByteOrder.LITTLE_ENDIAN).getLong(16);
    }
}
