package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileType;
import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The entries of one directory and the directory blocks they are packed into. Directory block
 * {@code i} is file block {@code i} of the directory's data fork. A new entry goes into the first
 * block with room, else into a new block at the end; removing an entry rewrites only its block, and an
 * empty last block is given back.
 *
 * <p>Not thread-safe: used under the mount's metadata lock.
 */
final class Directory {

    /**
     * One name.
     *
     * @param ino the inode it names
     * @param type what the inode is
     * @param block the directory block holding the entry
     */
    record Entry(long ino, FileType type, int block) {
    }

    private final int capacity;
    private final TreeMap<String, Entry> entries = new TreeMap<>();
    private final List<Map<String, Entry>> blocks = new ArrayList<>();
    private final List<Integer> used = new ArrayList<>();

    Directory(int blockSize) {
        this.capacity = Layout.directoryCapacity(blockSize);
    }

    Entry get(String name) {
        return entries.get(name);
    }

    boolean isEmpty() {
        return entries.isEmpty();
    }

    int blockCount() {
        return blocks.size();
    }

    /** @return every entry, sorted by name */
    List<DirEntry> list() {
        List<DirEntry> list = new ArrayList<>(entries.size());
        entries.forEach((name, entry) -> list.add(new DirEntry(name, entry.ino(), entry.type())));
        return list;
    }

    /** @return every entry, by name */
    Map<String, Entry> entries() {
        return entries;
    }

    /** @return the block a new entry {@code name} would go to; {@link #blockCount()} means a new block */
    int placeFor(String name) {
        int bytes = entryBytes(name);
        for (int i = 0; i < blocks.size(); i++) {
            if (used.get(i) + bytes <= capacity) {
                return i;
            }
        }
        return blocks.size();
    }

    /** Adds an entry to block {@code block} (from {@link #placeFor}), appending that block if new. */
    void add(String name, long ino, FileType type, int block) {
        if (block == blocks.size()) {
            blocks.add(new LinkedHashMap<>());
            used.add(0);
        }
        Entry entry = new Entry(ino, type, block);
        entries.put(name, entry);
        blocks.get(block).put(name, entry);
        used.set(block, used.get(block) + entryBytes(name));
    }

    /**
     * Removes an entry.
     *
     * @return the block it was in
     */
    int remove(String name) {
        Entry entry = entries.remove(name);
        blocks.get(entry.block()).remove(name);
        used.set(entry.block(), used.get(entry.block()) - entryBytes(name));
        return entry.block();
    }

    /** @return whether the last block holds no entry (and can be given back) */
    boolean lastBlockEmpty() {
        return !blocks.isEmpty() && blocks.getLast().isEmpty();
    }

    void dropLastBlock() {
        blocks.removeLast();
        used.removeLast();
    }

    /** @return the payload of directory block {@code block} */
    ByteBuffer encodeBlock(long dirIno, int block) {
        Map<String, Entry> inBlock = blocks.get(block);
        BlockWriter writer = BlockWriter.allocate(Layout.DIRECTORY_HEADER + used.get(block), "xfs-like directory block");
        try {
            writer.putLong(dirIno).putInt(block).putInt(inBlock.size());
            for (var e : inBlock.entrySet()) {
                writer.putLong(e.getValue().ino()).putByte(typeCode(e.getValue().type())).putString(e.getKey());
            }
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("directory block " + block + " of inode " + dirIno + " overflowed", e);
        }
        return writer.written();
    }

    /**
     * Adds the entries of a directory block read from the device.
     *
     * @throws CorruptFilesystemException if the block does not belong here, a name is bad or repeated
     */
    void decodeBlock(BlockReader reader, long dirIno, int block) throws CorruptFilesystemException {
        long owner = reader.getLong();
        int index = reader.getInt();
        int count = reader.getInt();
        if (owner != dirIno || index != block || count < 0) {
            throw reader.corrupt("directory block of inode " + owner + " index " + index + " with " + count
                    + " entries, expected inode " + dirIno + " index " + block);
        }
        if (block != blocks.size()) {
            throw reader.corrupt("directory block " + block + " out of order");
        }
        blocks.add(new LinkedHashMap<>());
        used.add(0);
        for (int i = 0; i < count; i++) {
            long ino = reader.getLong();
            int typeCode = reader.getByte();
            String name = reader.getString();
            FileType type = typeOf(typeCode);
            if (type == null || !validName(name) || entries.containsKey(name) || ino < 1) {
                throw reader.corrupt("bad directory entry '" + name + "' -> inode " + ino + " type " + typeCode);
            }
            add(name, ino, type, block);
        }
    }

    static int entryBytes(String name) {
        return Layout.DIRENT_FIXED_BYTES + name.getBytes(StandardCharsets.UTF_8).length;
    }

    static boolean validName(String name) {
        return !name.isEmpty() && !name.equals(".") && !name.equals("..") && name.indexOf('/') < 0
                && name.indexOf('\0') < 0 && name.getBytes(StandardCharsets.UTF_8).length <= Layout.MAX_NAME_BYTES;
    }

    static int typeCode(FileType type) {
        return type == FileType.DIRECTORY ? Layout.TYPE_DIRECTORY : Layout.TYPE_REGULAR;
    }

    static FileType typeOf(int code) {
        return switch (code) {
            case Layout.TYPE_REGULAR -> FileType.REGULAR;
            case Layout.TYPE_DIRECTORY -> FileType.DIRECTORY;
            default -> null;
        };
    }
}
