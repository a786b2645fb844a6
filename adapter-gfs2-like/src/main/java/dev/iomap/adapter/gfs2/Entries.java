package dev.iomap.adapter.gfs2;

import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * The byte encodings of a directory's entries and of a dinode's extended attributes, both kept sorted
 * by name bytes (unsigned). A directory entry: u8 type (1 regular, 2 directory, 3 symbolic link),
 * u64 inode, u16 name length, name bytes. An attribute: u16 name length, name bytes, u32
 * value length, value bytes.
 */
final class Entries {
    private Entries() {
    }

    /**
     * One directory entry.
     *
     * @param ino the inode
     * @param type its type
     */
    record Entry(long ino, FileType type) {
    }

    /** @return an empty map ordered by unsigned name bytes */
    static <V> TreeMap<String, V> sorted() {
        return new TreeMap<>(FileNames.BYTE_ORDER);
    }

    /**
     * @param bytes a directory's content
     * @param dirIno the directory, for messages
     * @return its entries by name
     * @throws CorruptFilesystemException if the encoding is broken
     */
    static TreeMap<String, Entry> decodeDirectory(byte[] bytes, long dirIno) throws CorruptFilesystemException {
        TreeMap<String, Entry> entries = sorted();
        ByteBuffer p = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        try {
            while (p.hasRemaining()) {
                int code = p.get() & 0xff;
                long ino = p.getLong();
                byte[] name = new byte[p.getShort() & 0xffff];
                p.get(name);
                FileType type = switch (code) {
                    case 1 -> FileType.REGULAR;
                    case 2 -> FileType.DIRECTORY;
                    case 3 -> FileType.SYMLINK;
                    default -> throw new CorruptFilesystemException("directory " + dirIno + ": entry type " + code);
                };
                entries.put(FileNames.decode(name), new Entry(ino, type));
            }
        } catch (java.nio.BufferUnderflowException e) {
            throw new CorruptFilesystemException("directory " + dirIno + ": entries end mid-entry");
        }
        return entries;
    }

    /** @return the content of a directory with these entries */
    static byte[] encodeDirectory(Map<String, Entry> entries) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Map.Entry<String, Entry> e : entries.entrySet()) {
            byte[] name = FileNames.encode(e.getKey());
            ByteBuffer b = ByteBuffer.allocate(11 + name.length).order(ByteOrder.LITTLE_ENDIAN);
            b.put((byte) (e.getValue().type().ordinal() + 1)).putLong(e.getValue().ino())
                    .putShort((short) name.length).put(name);
            out.writeBytes(b.array());
        }
        return out.toByteArray();
    }

    /**
     * @param bytes encoded attributes
     * @param ino the inode, for messages
     * @return the attributes by name
     * @throws CorruptFilesystemException if the encoding is broken
     */
    static TreeMap<String, byte[]> decodeXattrs(byte[] bytes, long ino) throws CorruptFilesystemException {
        TreeMap<String, byte[]> attrs = sorted();
        ByteBuffer p = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        try {
            while (p.hasRemaining()) {
                byte[] name = new byte[p.getShort() & 0xffff];
                p.get(name);
                int length = p.getInt();
                if (length < 0) {
                    throw new CorruptFilesystemException("inode " + ino + ": attribute value length " + length);
                }
                byte[] value = new byte[length];
                p.get(value);
                attrs.put(FileNames.decode(name), value);
            }
        } catch (java.nio.BufferUnderflowException e) {
            throw new CorruptFilesystemException("inode " + ino + ": attributes end mid-attribute");
        }
        return attrs;
    }

    /** @return the encoding of these attributes */
    static byte[] encodeXattrs(Map<String, byte[]> attrs) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Map.Entry<String, byte[]> e : attrs.entrySet()) {
            byte[] name = FileNames.encode(e.getKey());
            ByteBuffer b = ByteBuffer.allocate(6 + name.length + e.getValue().length).order(ByteOrder.LITTLE_ENDIAN);
            b.putShort((short) name.length).put(name).putInt(e.getValue().length).put(e.getValue());
            out.writeBytes(b.array());
        }
        return out.toByteArray();
    }

    /** @return a copy of {@code bytes} */
    static byte[] copy(byte[] bytes) {
        return Arrays.copyOf(bytes, bytes.length);
    }
}
