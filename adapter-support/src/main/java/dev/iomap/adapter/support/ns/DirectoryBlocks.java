package dev.iomap.adapter.support.ns;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.api.CorruptFileSystemException;
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
 * The entries of one directory and the directory blocks they are packed into. Directory block {@code i}
 * is the {@code i}-th block of the directory's contents (where it lives on the device is the adapter's
 * business). A new entry goes into the first block with room ({@link #placeFor}), else into a new block
 * at the end; removing an entry changes only its block, and an empty last block can be given back
 * ({@link #lastBlockEmpty}, {@link #dropLastBlock}).
 *
 * <p>Block payload ({@link #encodeBlock}), little-endian: owner directory inode (u64), block index (u32),
 * entry count (u32), then per entry in the order they were added to the block: inode (u64), type code
 * (u8, {@link FileTypeCodes}), name length (u32) and the name's bytes. The adapter frames the payload
 * (for example in a {@link dev.iomap.adapter.support.MetadataBlock}) and gives each directory a
 * {@code payloadBytes} (the most payload bytes one of its blocks holds).
 *
 * <p>Names are byte strings: a block stores each name's {@link FileNames#encode} bytes exactly, a name
 * read back is {@link FileNames#decode}d, lengths are counted in those bytes and entries are kept in
 * {@link FileNames#BYTE_ORDER}. The {@code String} names given to the methods are in {@link FileNames}'
 * form (the core checked them); two are the same name exactly when their bytes are.
 *
 * <p>Not thread-safe: use it under the adapter's metadata lock.
 */
public final class DirectoryBlocks {
    /** Bytes of a block's header: owner inode (8), block index (4), entry count (4). */
    public static final int HEADER_BYTES = 16;
    /** Fixed bytes of one entry: inode (8), type code (1), name length (4). */
    public static final int ENTRY_FIXED_BYTES = 13;

    /**
     * One name of the directory.
     *
     * @param ino the inode it names, at least 1
     * @param type what the inode is
     * @param block the directory block holding the entry
     */
    public record Entry(long ino, FileType type, int block) {
    }

    /** A name with its bytes, ordered and compared by the bytes. */
    private static final class Name implements Comparable<Name> {
        final String string;
        final byte[] bytes;

        private Name(String string, byte[] bytes) {
            this.string = string;
            this.bytes = bytes;
        }

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

    /**
     * An empty directory with no block.
     *
     * @param payloadBytes the most bytes one block's payload may take (header included); at least
     *     {@link #HEADER_BYTES} plus one entry with a name of {@link FileNames#MAX_NAME_BYTES} bytes
     * @throws IllegalArgumentException if {@code payloadBytes} cannot hold the longest entry
     */
    public DirectoryBlocks(int payloadBytes) {
        if (payloadBytes < HEADER_BYTES + ENTRY_FIXED_BYTES + FileNames.MAX_NAME_BYTES) {
            throw new IllegalArgumentException("a directory block of " + payloadBytes
                    + " payload bytes cannot hold an entry with the longest name");
        }
        this.capacity = payloadBytes - HEADER_BYTES;
    }

    /**
     * @param name a name in {@link FileNames}' form
     * @return its entry, or null if the directory has no such name
     */
    public Entry get(String name) {
        return entries.get(Name.of(name));
    }

    /** @return whether the directory has no entry */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** @return how many directory blocks it has (empty ones included) */
    public int blockCount() {
        return blocks.size();
    }

    /** @return every entry, sorted by the bytes of its name */
    public List<DirEntry> list() {
        List<DirEntry> list = new ArrayList<>(entries.size());
        entries.forEach((name, entry) -> list.add(new DirEntry(name.string, entry.ino(), entry.type())));
        return list;
    }

    /** @return every entry, sorted by the bytes of its name; a read-only view */
    public Collection<Entry> entries() {
        return Collections.unmodifiableCollection(entries.values());
    }

    /**
     * Calls {@code action} with every name and its entry, sorted by the bytes of the name.
     *
     * @param action what to call
     */
    public void forEach(BiConsumer<String, Entry> action) {
        entries.forEach((name, entry) -> action.accept(name.string, entry));
    }

    /**
     * @param name a name in {@link FileNames}' form
     * @return the first block with room for an entry {@code name}; {@link #blockCount()} means a new
     *     block at the end (which the adapter allocates before calling {@link #add})
     */
    public int placeFor(String name) {
        int bytes = entryBytes(name);
        for (int i = 0; i < blocks.size(); i++) {
            if (used.get(i) + bytes <= capacity) {
                return i;
            }
        }
        return blocks.size();
    }

    /**
     * Adds an entry to block {@code block} (from {@link #placeFor}, or the block of an entry just
     * removed), appending that block if it is {@link #blockCount()}.
     *
     * @param name a name in {@link FileNames}' form, not in the directory
     * @param ino the inode it names
     * @param type what the inode is
     * @param block the block to put it in, 0 to {@link #blockCount()}
     * @throws IllegalArgumentException if the name is there already, the block does not exist and is
     *     not the next one, or the entry does not fit in it
     */
    public void add(String name, long ino, FileType type, int block) {
        Name key = Name.of(name);
        if (entries.containsKey(key)) {
            throw new IllegalArgumentException("'" + name + "' is in the directory already");
        }
        int bytes = entryBytes(key.bytes);
        if (block < 0 || block > blocks.size() || (block < blocks.size() && used.get(block) + bytes > capacity)) {
            throw new IllegalArgumentException("directory block " + block + " of " + blocks.size()
                    + " has no room for '" + name + "'");
        }
        put(key, ino, type, block);
    }

    private void put(Name name, long ino, FileType type, int block) {
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
     * @param name a name in {@link FileNames}' form
     * @return the block it was in (the one to write again)
     * @throws IllegalArgumentException if the directory has no such name
     */
    public int remove(String name) {
        Name key = Name.of(name);
        Entry entry = entries.remove(key);
        if (entry == null) {
            throw new IllegalArgumentException("'" + name + "' is not in the directory");
        }
        blocks.get(entry.block()).remove(key);
        used.set(entry.block(), used.get(entry.block()) - entryBytes(key.bytes));
        return entry.block();
    }

    /** @return whether there is a last block and it holds no entry (and can be given back) */
    public boolean lastBlockEmpty() {
        return !blocks.isEmpty() && blocks.getLast().isEmpty();
    }

    /**
     * Forgets the last block, which must be empty.
     *
     * @throws IllegalStateException if there is no block or the last one holds entries
     */
    public void dropLastBlock() {
        if (!lastBlockEmpty()) {
            throw new IllegalStateException("the last directory block is missing or holds entries");
        }
        blocks.removeLast();
        used.removeLast();
    }

    /**
     * @param owner the directory's inode number, stored in the header
     * @param block a block, 0 to {@link #blockCount()} - 1
     * @return the payload of directory block {@code block}, as the class describes it: each name as its
     *     bytes, exactly; at most the {@code payloadBytes} given to the constructor
     * @throws IndexOutOfBoundsException if there is no such block
     */
    public ByteBuffer encodeBlock(long owner, int block) {
        Map<Name, Entry> inBlock = blocks.get(block);
        BlockWriter writer = BlockWriter.allocate(HEADER_BYTES + used.get(block), "directory block");
        try {
            writer.putLong(owner).putInt(block).putInt(inBlock.size());
            for (var e : inBlock.entrySet()) {
                writer.putLong(e.getValue().ino()).putByte(FileTypeCodes.code(e.getValue().type()))
                        .putByteString(e.getKey().bytes);
            }
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("directory block " + block + " of inode " + owner + " overflowed", e);
        }
        return writer.written();
    }

    /**
     * Adds the entries of a directory block read from the device; blocks are decoded in order, from 0.
     * A name may be any bytes a Linux name may be; it is decoded with {@link FileNames#decode}, so a
     * name that is valid UTF-8 reads as that {@code String}.
     *
     * @param reader the block's payload, positioned at its start
     * @param owner the directory's inode number
     * @param block the block's index: {@link #blockCount()}
     * @throws CorruptFileSystemException if the block names another owner or index, is out of order, has
     *     a bad name (empty, "." or "..", holding '/' or NUL, over {@value FileNames#MAX_NAME_BYTES}
     *     bytes), a name twice in the directory, an unknown type code, an inode below 1, or ends early
     */
    public void decodeBlock(BlockReader reader, long owner, int block) throws CorruptFileSystemException {
        long storedOwner = reader.getLong();
        int index = reader.getInt();
        int count = reader.getInt();
        if (storedOwner != owner || index != block || count < 0) {
            throw reader.corrupt("directory block of inode " + storedOwner + " index " + index + " with " + count
                    + " entries, expected inode " + owner + " index " + block);
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
            FileType type = FileTypeCodes.typeOf(typeCode);
            if (type == null || !validName(name.string) || entries.containsKey(name) || ino < 1) {
                throw reader.corrupt("bad directory entry '" + name + "' -> inode " + ino + " type " + typeCode);
            }
            put(name, ino, type, block);
        }
    }

    /**
     * @param name a name in {@link FileNames}' form
     * @return the bytes its entry takes in a directory block
     */
    public static int entryBytes(String name) {
        return entryBytes(FileNames.encode(name));
    }

    private static int entryBytes(byte[] name) {
        return ENTRY_FIXED_BYTES + name.length;
    }

    /**
     * @param name any string
     * @return whether it is a name a directory can hold: {@link FileNames#isValid}'s rules, so 1 to
     *     {@value FileNames#MAX_NAME_BYTES} bytes, no '/' or NUL, not "." or "..", and in
     *     {@link FileNames}' form
     */
    public static boolean validName(String name) {
        return FileNames.isValid(name);
    }
}
