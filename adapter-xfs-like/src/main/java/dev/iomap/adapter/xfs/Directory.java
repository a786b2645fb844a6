package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * The entries of one directory and the directory blocks they are packed into. Directory block
 * {@code i} is file block {@code i} of the directory's data fork. A new entry goes into the first
 * block with room, else into a new block at the end; removing an entry rewrites only its block, and an
 * empty last block is given back.
 *
 * <p>Names are byte strings: a block stores each name's {@link FileNames#encode} bytes exactly, a name
 * read back is {@link FileNames#decode}d, lengths are counted in those bytes and entries are kept in
 * {@link FileNames#BYTE_ORDER}. The {@code String} names of the methods are in {@link FileNames}' form
 * (the core checked them); two are the same name exactly when their bytes are.
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

    /** A name with its bytes, ordered and compared by the bytes. */
    private static final class Name implements Comparable<Name> {
        final String string;
        final byte[] bytes;

        private Name(String string, byte[] bytes) {
            this.string = string;
            this.bytes = bytes;
        }

        /** @throws dev.iomap.api.UnrepresentableNameException if {@code string} is not in FileNames' form */
        static Name of(String string) {
            return new Name(string, FileNames.encode(string));
        }

        static Name ofBytes(byte[] bytes) {
            return new Name(FileNames.decode(bytes), bytes);
        }

        @Override
        public int compareTo(Name other) {
            return Arrays.compareUnsigned(bytes, other.bytes);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Name that && Arrays.equals(bytes, that.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return string;
        }
    }

    private final int capacity;
    private final TreeMap<Name, Entry> entries = new TreeMap<>();
    private final List<Map<Name, Entry>> blocks = new ArrayList<>();
    private final List<Integer> used = new ArrayList<>();

    Directory(int blockSize) {
        this.capacity = Layout.directoryCapacity(blockSize);
    }

    Entry get(String name) {
        return entries.get(Name.of(name));
    }

    boolean isEmpty() {
        return entries.isEmpty();
    }

    int blockCount() {
        return blocks.size();
    }

    /** @return every entry, sorted by the bytes of its name */
    List<DirEntry> list() {
        List<DirEntry> list = new ArrayList<>(entries.size());
        entries.forEach((name, entry) -> list.add(new DirEntry(name.string, entry.ino(), entry.type())));
        return list;
    }

    /** @return every entry, sorted by the bytes of its name; a read-only view */
    Collection<Entry> entries() {
        return Collections.unmodifiableCollection(entries.values());
    }

    /** Calls {@code action} with every name and its entry, sorted by the bytes of the name. */
    void forEach(BiConsumer<String, Entry> action) {
        entries.forEach((name, entry) -> action.accept(name.string, entry));
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
        add(Name.of(name), ino, type, block);
    }

    private void add(Name name, long ino, FileType type, int block) {
        if (block == blocks.size()) {
            blocks.add(new LinkedHashMap<>());
            used.add(0);
        }
        Entry entry = new Entry(ino, type, block);
        entries.put(name, entry);
        blocks.get(block).put(name, entry);
        used.set(block, used.get(block) + entryBytes(name.bytes));
    }

    /**
     * Removes an entry.
     *
     * @return the block it was in
     */
    int remove(String name) {
        Name key = Name.of(name);
        Entry entry = entries.remove(key);
        blocks.get(entry.block()).remove(key);
        used.set(entry.block(), used.get(entry.block()) - entryBytes(key.bytes));
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

    /** @return the payload of directory block {@code block}: each name as its bytes, exactly */
    ByteBuffer encodeBlock(long dirIno, int block) {
        Map<Name, Entry> inBlock = blocks.get(block);
        BlockWriter writer = BlockWriter.allocate(Layout.DIRECTORY_HEADER + used.get(block), "xfs-like directory block");
        try {
            writer.putLong(dirIno).putInt(block).putInt(inBlock.size());
            for (var e : inBlock.entrySet()) {
                writer.putLong(e.getValue().ino()).putByte(typeCode(e.getValue().type())).putByteString(e.getKey().bytes);
            }
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("directory block " + block + " of inode " + dirIno + " overflowed", e);
        }
        return writer.written();
    }

    /**
     * Adds the entries of a directory block read from the device. A name may be any bytes a Linux
     * name may be; it is decoded with {@link FileNames#decode}, so a name that is valid UTF-8 (every
     * name written before names were byte strings) reads as the same {@code String} as before.
     *
     * @throws CorruptFilesystemException if the block does not belong here, a name is bad (empty,
     *     "." or "..", holding '/' or NUL, over {@value Layout#MAX_NAME_BYTES} bytes) or repeated
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
            Name name = Name.ofBytes(reader.getByteString());
            FileType type = typeOf(typeCode);
            if (type == null || !validName(name.string) || entries.containsKey(name) || ino < 1) {
                throw reader.corrupt("bad directory entry '" + name + "' -> inode " + ino + " type " + typeCode);
            }
            add(name, ino, type, block);
        }
    }

    /**
     * @param name a name in {@link FileNames}' form
     * @return the bytes its entry takes in a directory block
     */
    static int entryBytes(String name) {
        return entryBytes(FileNames.encode(name));
    }

    private static int entryBytes(byte[] name) {
        return Layout.DIRENT_FIXED_BYTES + name.length;
    }

    /**
     * @param name any string
     * @return whether it is a name a directory can hold: {@link FileNames#check}'s rules, so 1 to
     *     {@value Layout#MAX_NAME_BYTES} bytes, no '/' or NUL, not "." or "..", and in
     *     {@link FileNames}' form
     */
    static boolean validName(String name) {
        return FileNames.isValid(name);
    }

    static int typeCode(FileType type) {
        return switch (type) {
            case REGULAR -> Layout.TYPE_REGULAR;
            case DIRECTORY -> Layout.TYPE_DIRECTORY;
            case SYMLINK -> Layout.TYPE_SYMLINK;
        };
    }

    static FileType typeOf(int code) {
        return switch (code) {
            case Layout.TYPE_REGULAR -> FileType.REGULAR;
            case Layout.TYPE_DIRECTORY -> FileType.DIRECTORY;
            case Layout.TYPE_SYMLINK -> FileType.SYMLINK;
            default -> null;
        };
    }
}
