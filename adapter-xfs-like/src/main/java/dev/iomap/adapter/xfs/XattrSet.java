package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.api.CorruptFilesystemException;
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
 * in unsigned byte order of the names: name length (u8, 1 … 255), value length (u32, 0 … 65536), the
 * name's bytes, the value. Immutable values are copied in and out. Not thread-safe: used under the
 * metadata lock.
 */
final class XattrSet {
    private static final int FIXED_BYTES = 4;
    private static final int ENTRY_FIXED_BYTES = 5;

    private final TreeMap<byte[], byte[]> entries = new TreeMap<>(Arrays::compareUnsigned);
    private int encodedBytes = FIXED_BYTES;

    boolean isEmpty() {
        return entries.isEmpty();
    }

    /** @return the value, or null if there is no such attribute */
    byte[] get(String name) {
        byte[] value = entries.get(FileNames.encode(name));
        return value == null ? null : value.clone();
    }

    /** @return the names in {@link FileNames#BYTE_ORDER} */
    List<String> names() {
        List<String> names = new ArrayList<>(entries.size());
        for (byte[] name : entries.keySet()) {
            names.add(FileNames.decode(name));
        }
        return names;
    }

    /** @return the encoded size if {@code name} were set to a value of {@code valueBytes} bytes */
    int sizeWith(String name, int valueBytes) {
        byte[] key = FileNames.encode(name);
        byte[] old = entries.get(key);
        int size = encodedBytes + ENTRY_FIXED_BYTES + key.length + valueBytes;
        return old == null ? size : size - ENTRY_FIXED_BYTES - key.length - old.length;
    }

    void put(String name, byte[] value) {
        byte[] key = FileNames.encode(name);
        encodedBytes = sizeWith(name, value.length);
        entries.put(key, value.clone());
    }

    /** @return whether it was there */
    boolean remove(String name) {
        byte[] key = FileNames.encode(name);
        byte[] old = entries.remove(key);
        if (old != null) {
            encodedBytes -= ENTRY_FIXED_BYTES + key.length + old.length;
        }
        return old != null;
    }

    /** @return bytes {@link #encode} writes */
    int encodedBytes() {
        return encodedBytes;
    }

    /** @return a copy */
    XattrSet copy() {
        XattrSet copy = new XattrSet();
        entries.forEach((name, value) -> copy.entries.put(name, value));
        copy.encodedBytes = encodedBytes;
        return copy;
    }

    byte[] encode() {
        BlockWriter writer = BlockWriter.allocate(encodedBytes, "xfs-like extended attributes");
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
     * @param where the inode, for messages
     * @return the attributes
     * @throws CorruptFilesystemException if the bytes are not such an encoding of at least one attribute
     *     with names Linux accepts, in order, each once
     */
    static XattrSet decode(byte[] bytes, String where) throws CorruptFilesystemException {
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
