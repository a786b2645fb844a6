package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.Crc32c;
import dev.iomap.api.CorruptFileSystemException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * One B-tree node in memory and its on-device encoding (one block; see the module README). A leaf (level 0)
 * holds keys and values; an internal node holds, for each child, the smallest key the child may hold
 * and the child's block (and the child itself once loaded). Not thread-safe: the store's lock guards it.
 */
final class Node {
    /** "BCHN" little-endian. */
    static final int MAGIC = 0x4e484342;
    /** Bytes of the node header. */
    static final int HEADER_BYTES = 32;
    /** Bytes of an encoded key: btree (1), inode (8), offset (8). */
    static final int KEY_BYTES = 17;
    /** Bytes of an internal entry: key and child block. */
    static final int CHILD_ENTRY_BYTES = KEY_BYTES + 8;
    /** Bytes of a leaf entry besides its value: key and value length (2). */
    static final int LEAF_ENTRY_OVERHEAD = KEY_BYTES + 2;
    /** The smallest key: the lower bound of the root. */
    static final BKey MIN_KEY = new BKey(0, 0, 0);

    final int level;
    /** The block the node was last written to, -1 if never. */
    long block = -1;
    boolean dirty;
    final ArrayList<BKey> keys = new ArrayList<>();
    /** Leaf only. */
    final ArrayList<byte[]> values;
    /** Internal only: child blocks (-1 for a child never written). */
    final ArrayList<Long> childBlocks;
    /** Internal only: children once loaded, else null. */
    final ArrayList<Node> children;
    /** Encoded bytes of the entries. */
    int bytes;

    Node(int level) {
        this.level = level;
        this.values = level == 0 ? new ArrayList<>() : null;
        this.childBlocks = level == 0 ? null : new ArrayList<>();
        this.children = level == 0 ? null : new ArrayList<>();
    }

    boolean isLeaf() {
        return level == 0;
    }

    int size() {
        return keys.size();
    }

    /** @return the index of {@code key} if present, else {@code -(insertion point) - 1} */
    int search(BKey key) {
        int lo = 0;
        int hi = keys.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = keys.get(mid).compareTo(key);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -lo - 1;
    }

    /** @return for an internal node, the child whose range holds {@code key} (0 below the first key) */
    int childIndex(BKey key) {
        int i = search(key);
        if (i >= 0) {
            return i;
        }
        return Math.max(0, -i - 2);
    }

    static int leafEntryBytes(byte[] value) {
        return LEAF_ENTRY_OVERHEAD + value.length;
    }

    int entryBytes(int index) {
        return isLeaf() ? leafEntryBytes(values.get(index)) : CHILD_ENTRY_BYTES;
    }

    void insertLeaf(int index, BKey key, byte[] value) {
        keys.add(index, key);
        values.add(index, value);
        bytes += leafEntryBytes(value);
    }

    void insertChild(int index, BKey key, long childBlock, Node child) {
        keys.add(index, key);
        childBlocks.add(index, childBlock);
        children.add(index, child);
        bytes += CHILD_ENTRY_BYTES;
    }

    void remove(int index) {
        bytes -= entryBytes(index);
        keys.remove(index);
        if (isLeaf()) {
            values.remove(index);
        } else {
            childBlocks.remove(index);
            children.remove(index);
        }
    }

    /** Moves entries from {@code from} on to {@code right} (a new, empty node of the same level). */
    void moveTail(int from, Node right) {
        for (int i = from; i < keys.size(); i++) {
            right.keys.add(keys.get(i));
            right.bytes += entryBytes(i);
            if (isLeaf()) {
                right.values.add(values.get(i));
            } else {
                right.childBlocks.add(childBlocks.get(i));
                right.children.add(children.get(i));
            }
        }
        while (keys.size() > from) {
            remove(keys.size() - 1);
        }
    }

    /** Appends every entry of {@code right} (same level) to this node. */
    void appendAll(Node right) {
        for (int i = 0; i < right.size(); i++) {
            keys.add(right.keys.get(i));
            bytes += right.entryBytes(i);
            if (isLeaf()) {
                values.add(right.values.get(i));
            } else {
                childBlocks.add(right.childBlocks.get(i));
                children.add(right.children.get(i));
            }
        }
    }

    /** @return the block of child {@code i}: the loaded child's if loaded */
    long childBlock(int i) {
        Node child = children.get(i);
        return child != null ? child.block : childBlocks.get(i);
    }

    /**
     * @param blockSize the node size
     * @param checkpoint the sequence of the checkpoint writing it
     * @return the node encoded at its {@link #block}, checksummed
     */
    ByteBuffer encode(int blockSize, long checkpoint) {
        ByteBuffer buf = ByteBuffer.allocate(blockSize).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(0, MAGIC);
        buf.putLong(8, block);
        buf.putLong(16, checkpoint);
        buf.put(24, (byte) level);
        buf.putShort(26, (short) keys.size());
        buf.putInt(28, bytes);
        buf.position(HEADER_BYTES);
        for (int i = 0; i < keys.size(); i++) {
            putKey(buf, keys.get(i));
            if (isLeaf()) {
                byte[] value = values.get(i);
                buf.putShort((short) value.length);
                buf.put(value);
            } else {
                buf.putLong(childBlock(i));
            }
        }
        buf.putInt(4, Crc32c.of(buf, 8, blockSize - 8));
        return buf.clear();
    }

    /**
     * Decodes and verifies a node read from {@code block}.
     *
     * @param buf the block's bytes, little-endian, position 0
     * @param block where it was read
     * @param expectedLevel the level its parent (or the superblock) says it has
     * @return the node, clean
     * @throws CorruptFileSystemException naming the block if anything is wrong
     */
    static Node decode(ByteBuffer buf, long block, int expectedLevel) throws CorruptFileSystemException {
        int blockSize = buf.capacity();
        String where = "B-tree node at block " + block;
        if (buf.getInt(0) != MAGIC) {
            throw new CorruptFileSystemException(where + ": bad magic " + String.format("0x%08x", buf.getInt(0)));
        }
        int crc = Crc32c.of(buf, 8, blockSize - 8);
        if (buf.getInt(4) != crc) {
            throw new CorruptFileSystemException(where + ": checksum mismatch (stored "
                    + String.format("0x%08x", buf.getInt(4)) + ", computed " + String.format("0x%08x", crc) + ")");
        }
        if (buf.getLong(8) != block) {
            throw new CorruptFileSystemException(where + ": header says block " + buf.getLong(8)
                    + " (a misdirected write)");
        }
        int level = buf.get(24) & 0xFF;
        if (level != expectedLevel) {
            throw new CorruptFileSystemException(where + ": level " + level + ", expected " + expectedLevel);
        }
        int count = buf.getShort(26) & 0xFFFF;
        int bytes = buf.getInt(28);
        if (bytes < 0 || bytes > blockSize - HEADER_BYTES) {
            throw new CorruptFileSystemException(where + ": entry bytes " + bytes + " do not fit");
        }
        Node node = new Node(level);
        node.block = block;
        buf.position(HEADER_BYTES).limit(HEADER_BYTES + bytes);
        try {
            for (int i = 0; i < count; i++) {
                BKey key = getKey(buf, where);
                if (i > 0 && node.keys.get(i - 1).compareTo(key) >= 0) {
                    throw new CorruptFileSystemException(where + ": key " + i + " " + key
                            + " is not above the key before it");
                }
                if (level == 0) {
                    int length = buf.getShort() & 0xFFFF;
                    if (length > StoreLimits.MAX_VALUE_BYTES) {
                        throw new CorruptFileSystemException(where + ": value of " + length + " bytes");
                    }
                    byte[] value = new byte[length];
                    buf.get(value);
                    node.insertLeaf(i, key, value);
                } else {
                    long child = buf.getLong();
                    node.insertChild(i, key, child, null);
                }
            }
        } catch (java.nio.BufferUnderflowException e) {
            throw new CorruptFileSystemException(where + ": " + count + " entries overrun " + bytes + " bytes");
        }
        if (buf.hasRemaining() || node.bytes != bytes) {
            throw new CorruptFileSystemException(where + ": entries take " + node.bytes + " bytes, header says "
                    + bytes);
        }
        if (level > 0 && count == 0) {
            throw new CorruptFileSystemException(where + ": internal node without children");
        }
        return node;
    }

    static void putKey(ByteBuffer buf, BKey key) {
        buf.put((byte) key.btree()).putLong(key.inode()).putLong(key.offset());
    }

    static BKey getKey(ByteBuffer buf, String where) throws CorruptFileSystemException {
        int btree = buf.get() & 0xFF;
        long inode = buf.getLong();
        long offset = buf.getLong();
        if (btree > BKey.MAX_BTREE) {
            throw new CorruptFileSystemException(where + ": btree id " + btree + " out of range");
        }
        return new BKey(btree, inode, offset);
    }

    /** @return the children loaded now (internal nodes), for walks */
    List<Node> loadedChildren() {
        List<Node> loaded = new ArrayList<>();
        for (Node child : children) {
            if (child != null) {
                loaded.add(child);
            }
        }
        return loaded;
    }
}
