package dev.iomap.adapter.support.skeleton;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.api.FileType;
import dev.iomap.api.FsckReport;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The fsck walker: reads the image as replaying the journal would leave it ({@link Journal#inspect()},
 * nothing written), and checks that the root is a directory, every block the model says a file owns lies
 * in the data area, is owned once and is marked in the bitmap, no bitmap bit is set that nobody owns (a
 * leak), no file maps a block past its size, every directory entry names an existing inode, and every
 * link count equals the names of its inode.
 */
final class SkeletonFsck implements MetaReader {
    private final Layout layout;
    private final BlockDevice view;
    private final BlockMapModel model;
    private SortedMap<Long, ByteBuffer> pending = new TreeMap<>();

    SkeletonFsck(Layout layout, BlockDevice view, BlockMapModel model) {
        this.layout = layout;
        this.view = view;
        this.model = model;
    }

    @Override
    public int blockSize() {
        return layout.blockSize();
    }

    @Override
    public ByteBuffer read(long block) throws IOException {
        ByteBuffer image = pending.get(block);
        ByteBuffer bytes = image != null ? image.duplicate() : BlockIo.read(view, block, 1);
        return bytes.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    FsckReport check() throws IOException {
        List<String> problems = new ArrayList<>();
        try {
            pending = Journal.open(view, layout.journalStart(), layout.journalBlocks()).inspect().images();
        } catch (IOException e) {
            return new FsckReport(List.of("journal: " + e.getMessage()), "superblock");
        }
        BitSet bitmap = new BitSet();
        int perBlock = layout.blockSize() * 8;
        for (long i = 0; i < layout.bitmapBlocks(); i++) {
            BitSet part = BitSet.valueOf(read(layout.bitmapStart() + i));
            for (int b = part.nextSetBit(0); b >= 0 && i * perBlock + b < layout.totalBlocks(); b = part.nextSetBit(b + 1)) {
                bitmap.set((int) (i * perBlock + b));
            }
        }
        TreeMap<Long, SkeletonInode> inodes = new TreeMap<>();
        try {
            for (long i = 0; i < layout.inodeBlocks(); i++) {
                InodeTable.decodeBlock(layout, i, read(layout.inodeStart() + i), inodes);
            }
        } catch (IOException e) {
            return new FsckReport(List.of(e.getMessage()), "superblock, bitmap");
        }
        if (bitmap.nextClearBit(0) < layout.firstDataBlock()) {
            problems.add("metadata block " + bitmap.nextClearBit(0) + " is free in the bitmap");
        }
        SkeletonInode root = inodes.get(Layout.ROOT);
        if (root == null || root.type() != FileType.DIRECTORY) {
            problems.add("the root directory (inode 1) is missing");
        }
        BitSet owned = new BitSet();
        Map<Long, Integer> names = new HashMap<>();
        long blocks = 0;
        for (SkeletonInode inode : inodes.values()) {
            blocks += ownedBlocks(inode, bitmap, owned, problems);
            if (inode.type() == FileType.DIRECTORY) {
                directory(inode, inodes, names, problems);
            }
        }
        for (SkeletonInode inode : inodes.values()) {
            int expected = inode.ino() == Layout.ROOT ? 0 : inode.links();
            int found = names.getOrDefault(inode.ino(), 0);
            if (found != expected) {
                problems.add("inode " + inode.ino() + " has link count " + inode.links() + " but " + found + " names");
            }
        }
        BitSet leaked = (BitSet) bitmap.clone();
        leaked.andNot(owned);
        leaked.clear(0, (int) layout.firstDataBlock());
        for (int b = leaked.nextSetBit(0); b >= 0; b = leaked.nextSetBit(b + 1)) {
            problems.add("block " + b + " is in use in the bitmap but no inode owns it (leaked)");
            if (problems.size() > 100) {
                break;
            }
        }
        return new FsckReport(problems, inodes.size() + " inodes, " + blocks + " blocks, "
                + pending.size() + " journalled images not yet at home");
    }

    private long ownedBlocks(SkeletonInode inode, BitSet bitmap, BitSet owned, List<String> problems) throws IOException {
        long[] count = new long[1];
        model.owned(this, inode, block -> {
            count[0]++;
            if (block < layout.firstDataBlock() || block >= layout.totalBlocks()) {
                problems.add("inode " + inode.ino() + " owns block " + block + " outside the data area");
            } else if (owned.get((int) block)) {
                problems.add("block " + block + " is owned twice (the second time by inode " + inode.ino() + ")");
            } else {
                owned.set((int) block);
                if (!bitmap.get((int) block)) {
                    problems.add("block " + block + " of inode " + inode.ino() + " is free in the bitmap");
                }
            }
        });
        long limit = model.maxFileBlocks(layout.blockSize());
        if (inode.size() > limit * layout.blockSize()) {
            problems.add("inode " + inode.ino() + " has size " + inode.size() + " past the largest file size");
        }
        for (long b = Layout.ceil(inode.size(), layout.blockSize()); b < limit; ) {
            Run run = model.map(this, inode, b, limit - b);
            if (!run.isHole()) {
                problems.add("inode " + inode.ino() + " maps file block " + b + " past its size " + inode.size());
                break;
            }
            b = run.end();
        }
        return count[0];
    }

    private void directory(SkeletonInode dir, Map<Long, SkeletonInode> inodes, Map<Long, Integer> names,
            List<String> problems) {
        DirectoryBlocks entries;
        try {
            entries = Directories.load(model, this, dir);
        } catch (IOException e) {
            problems.add("directory " + dir.ino() + ": " + e.getMessage());
            return;
        }
        entries.forEach((name, entry) -> {
            names.merge(entry.ino(), 1, Integer::sum);
            SkeletonInode child = inodes.get(entry.ino());
            if (child == null || child.type() != entry.type()) {
                problems.add("directory " + dir.ino() + " names inode " + entry.ino() + " as a " + entry.type()
                        + ", which " + (child == null ? "does not exist" : "is a " + child.type()));
            }
        });
    }
}
