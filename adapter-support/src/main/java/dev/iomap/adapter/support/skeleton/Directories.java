package dev.iomap.adapter.support.skeleton;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.api.FileType;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * The directories of one mount: each a {@link DirectoryBlocks} whose block {@code k} lives at the device
 * block the model maps for the directory inode's file block {@code k}, framed as a {@link MetadataBlock}
 * of type {@code "SDIR"}. Changed blocks are written (as journalled images) at the next commit. Guarded
 * by the mount's lock.
 */
final class Directories {
    static final int MAGIC = MetadataBlock.magic("SDIR");

    private final Map<Long, DirectoryBlocks> dirs = new HashMap<>();
    private final TreeSet<Long> dirty = new TreeSet<>();
    private final BlockMapModel model;
    private final int blockSize;
    private final Map<Long, SkeletonInode> inodes;

    Directories(BlockMapModel model, int blockSize, Map<Long, SkeletonInode> inodes) {
        this.model = model;
        this.blockSize = blockSize;
        this.inodes = inodes;
    }

    /** Reads a directory's blocks (its size says how many). */
    static DirectoryBlocks load(BlockMapModel model, MetaReader meta, SkeletonInode dir) throws IOException {
        DirectoryBlocks blocks = new DirectoryBlocks(MetadataBlock.maxPayload(meta.blockSize()));
        for (int k = 0; k < dir.size() / meta.blockSize(); k++) {
            Run run = model.map(meta, dir, k, 1);
            if (run.isHole()) {
                throw new dev.iomap.api.CorruptFileSystemException("directory " + dir.ino() + " has no block " + k);
            }
            MetadataBlock block = MetadataBlock.decode(meta.read(run.deviceBlock()), run.deviceBlock(), MAGIC);
            blocks.decodeBlock(block.reader(), dir.ino(), k);
        }
        return blocks;
    }

    void put(long ino, DirectoryBlocks blocks) {
        dirs.put(ino, blocks);
    }

    void remove(long ino) {
        dirs.remove(ino);
    }

    DirectoryBlocks get(long ino) throws IOException {
        DirectoryBlocks dir = dirs.get(ino);
        if (dir == null) {
            throw new NotDirectoryException("inode " + ino);
        }
        return dir;
    }

    long lookup(long dirIno, String name) throws IOException {
        DirectoryBlocks.Entry entry = get(dirIno).get(name);
        if (entry == null) {
            throw new NoSuchFileException(name);
        }
        return entry.ino();
    }

    /** Adds an entry, growing the directory by a block (allocated through the model) if none has room. */
    void add(BlockSpace space, SkeletonInode dir, String name, long ino, FileType type) throws IOException {
        DirectoryBlocks blocks = get(dir.ino());
        int k = blocks.placeFor(name);
        if (k == blocks.blockCount()) {
            model.allocate(space, dir, k, 1);
            dir.setSize((long) (k + 1) * blockSize);
        }
        blocks.add(name, ino, type, k);
        dirty.add(key(dir.ino(), k));
    }

    /** Removes an entry; empty blocks at the end go back to the model. */
    void remove(BlockSpace space, SkeletonInode dir, String name) throws IOException {
        DirectoryBlocks blocks = get(dir.ino());
        dirty.add(key(dir.ino(), blocks.remove(name)));
        int before = blocks.blockCount();
        while (blocks.lastBlockEmpty()) {
            blocks.dropLastBlock();
        }
        if (blocks.blockCount() < before) {
            model.free(space, dir, blocks.blockCount(), Long.MAX_VALUE, FreeReason.TRUNCATE);
            dir.setSize((long) blocks.blockCount() * blockSize);
        }
    }

    /** Writes every changed directory block as a metadata image for the next commit. */
    void flush(BlockSpace space) throws IOException {
        for (long key : dirty) {
            long ino = key >>> 24;
            int k = (int) (key & 0xffffff);
            DirectoryBlocks blocks = dirs.get(ino);
            if (blocks == null || k >= blocks.blockCount()) {
                continue;
            }
            Run run = model.map(space, inodes.get(ino), k, 1);
            MetadataBlock block = new MetadataBlock(MAGIC, run.deviceBlock(), 0, blocks.encodeBlock(ino, k));
            space.create(run.deviceBlock()).put(block.encode(blockSize));
        }
        dirty.clear();
    }

    private static long key(long ino, int k) {
        return ino << 24 | k;
    }
}
