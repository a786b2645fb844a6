package dev.iomap.adapter.support.ns;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.Xattrs;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The extended attributes of one inode in memory, and their encoding: count (u32), then per attribute
 * in unsigned byte order of the names: name length (u8, 1 … 255), value length (u32, 0 …
 * {@value Xattrs#MAX_VALUE_BYTES}), the name's bytes, the value. Names are in {@link FileNames}' form
 * and stored as their bytes; the caller has checked them ({@link Xattrs#checkName}) and the value
 * lengths. Values are copied in and out. Where the encoding goes (inline in an inode, a chain of
 * blocks: {@link ChainBlocks}) is the adapter's business; an empty set is normally stored as nothing,
 * and {@link #decode} refuses an encoding of no attribute. Not thread-safe: use it under the adapter's
 * metadata lock.
 */
public final class XattrSet {
    /** Bytes of the encoding before the first attribute: the count. */
    public static final int FIXED_BYTES = 4;
    /** Fixed bytes of one encoded attribute: name length (1), value length (4). */
    public static final int ENTRY_FIXED_BYTES = 5;

    /** An empty set; {@link #encodedBytes()} is {@value #FIXED_BYTES}. */
    public XattrSet() {
    }

    private final TreeMap<byte[], byte[]> entries = new TreeMap<>(Arrays::compareUnsigned);
    private int encodedBytes = FIXED_BYTES;

    /** @return whether it holds no attribute */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /**
     * @param name an attribute name in {@link FileNames}' form
     * @return a copy of the value, or null if there is no such attribute
     */
    public byte[] get(String name) {
        byte[] value = entries.get(FileNames.encode(name));
        return value == null ? null : value.clone();
    }

    /** @return the names in {@link FileNames#BYTE_ORDER} */
    public List<String> names() {
        List<String> names = new ArrayList<>(entries.size());
        for (byte[] name : entries.keySet()) {
            names.add(FileNames.decode(name));
        }
        return names;
    }

    /**
     * @param name an attribute name in {@link FileNames}' form
     * @param valueBytes the length of a value
     * @return what {@link #encodedBytes()} would be after {@code put(name, value)} with a value of
     *     {@code valueBytes} bytes (for a size limit checked before changing anything)
     */
    public int sizeWith(String name, int valueBytes) {
        byte[] key = FileNames.encode(name);
        byte[] old = entries.get(key);
        int size = encodedBytes + ENTRY_FIXED_BYTES + key.length + valueBytes;
        return old == null ? size : size - ENTRY_FIXED_BYTES - key.length - old.length;
    }

    /**
     * Sets an attribute, adding it or replacing its value.
     *
     * @param name an attribute name in {@link FileNames}' form
     * @param value the value (copied)
     */
    public void put(String name, byte[] value) {
        byte[] key = FileNames.encode(name);
        encodedBytes = sizeWith(name, value.length);
        entries.put(key, value.clone());
    }

    /**
     * Removes an attribute.
     *
     * @param name an attribute name in {@link FileNames}' form
     * @return whether it was there
     */
    public boolean remove(String name) {
        byte[] key = FileNames.encode(name);
        byte[] old = entries.remove(key);
        if (old != null) {
            encodedBytes -= ENTRY_FIXED_BYTES + key.length + old.length;
        }
        return old != null;
    }

    /** @return bytes {@link #encode} writes */
    public int encodedBytes() {
        return encodedBytes;
    }

    /** @return an independent copy (values are never changed in place, so they are shared) */
    public XattrSet copy() {
        XattrSet copy = new XattrSet();
        entries.forEach((name, value) -> copy.entries.put(name, value));
        copy.encodedBytes = encodedBytes;
        return copy;
    }

    /** @return the encoding the class describes, {@link #encodedBytes()} long */
    public byte[] encode() {
        BlockWriter writer = BlockWriter.allocate(encodedBytes, "extended attributes");
        try {
            writer.putInt(entries.size());
            for (Map.Entry<byte[], byte[]> entry : entries.entrySet()) {
                writer.putByte(entry.getKey().length).putInt(entry.getValue().length).putBytes(entry.getKey())
                        .putBytes(entry.getValue());
            }
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("extended attributes overflowed", e);
        }
        return writer.toByteArray();
    }

    /**
     * @param bytes what {@link #encode} wrote
     * @param where the inode, for messages (they start with {@code where + " extended attributes"})
     * @return the attributes
     * @throws CorruptFileSystemException if the bytes are not such an encoding of at least one attribute
     *     with names Linux accepts, in order, each once
     */
    public static XattrSet decode(byte[] bytes, String where) throws CorruptFileSystemException {
        BlockReader reader = new BlockReader(ByteBuffer.wrap(bytes), where + " extended attributes");
        XattrSet set = new XattrSet();
        int count = reader.getInt();
        if (count < 1 || count > bytes.length / (ENTRY_FIXED_BYTES + 1)) {
            throw reader.corrupt("holds " + count + " attributes in " + bytes.length + " bytes");
        }
        byte[] previous = null;
        for (int i = 0; i < count; i++) {
            int nameLength = reader.getByte();
            int valueLength = reader.getInt();
            if (nameLength < 1 || valueLength < 0 || valueLength > Xattrs.MAX_VALUE_BYTES) {
                throw reader.corrupt("attribute " + i + " has a name of " + nameLength + " bytes and a value of "
                        + valueLength);
            }
            byte[] name = reader.getBytes(nameLength);
            byte[] value = reader.getBytes(valueLength);
            String decoded = FileNames.decode(name);
            try {
                Xattrs.checkName(decoded);
            } catch (IOException | RuntimeException e) {
                throw reader.corrupt("attribute " + i + " has a bad name: " + e.getMessage());
            }
            if (previous != null && Arrays.compareUnsigned(previous, name) >= 0) {
                throw reader.corrupt("attribute '" + decoded + "' is out of order or repeated");
            }
            previous = name;
            set.put(decoded, value);
        }
        if (reader.remaining() != 0) {
            throw reader.corrupt(reader.remaining() + " bytes follow the last attribute");
        }
        return set;
    }
}
