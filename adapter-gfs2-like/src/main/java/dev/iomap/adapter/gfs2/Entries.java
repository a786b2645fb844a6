package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.adapter.support.ns.FileTypeCodes;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * The byte encoding of a directory's entries, sorted by name bytes (unsigned): u8 type
 * ({@link FileTypeCodes}), u64 inode, u16 name length, name bytes. (Extended attributes use
 * adapter-support's {@code XattrSet} encoding.)
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
     * @throws CorruptFileSystemException if the encoding is broken, a name is invalid (adapter-support's
     *     {@link DirectoryBlocks#validName}: empty, "." or "..", holding '/' or NUL, too long) or there twice,
     *     or an inode number is below 1
     */
    static TreeMap<String, Entry> decodeDirectory(byte[] bytes, long dirIno) throws CorruptFileSystemException {
        TreeMap<String, Entry> entries = sorted();
        ByteBuffer p = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        try {
            while (p.hasRemaining()) {
                int code = p.get() & 0xff;
                long ino = p.getLong();
                byte[] name = new byte[p.getShort() & 0xffff];
                p.get(name);
                if (FileTypeCodes.typeOf(code) == null) {
                    throw new CorruptFileSystemException("directory " + dirIno + ": entry type " + code);
                }
                FileType type = FileTypeCodes.typeOf(code);
                String decoded = FileNames.decode(name);
                if (!DirectoryBlocks.validName(decoded) || ino < 1) {
                    throw new CorruptFileSystemException("directory " + dirIno + ": bad entry '" + printable(decoded)
                            + "' -> inode " + ino + " (a name is 1 to " + FileNames.MAX_NAME_BYTES
                            + " bytes, not '.' or '..', without '/' or NUL)");
                }
                if (entries.put(decoded, new Entry(ino, type)) != null) {
                    throw new CorruptFileSystemException("directory " + dirIno + ": name '" + printable(decoded)
                            + "' twice");
                }
            }
        } catch (java.nio.BufferUnderflowException e) {
            throw new CorruptFileSystemException("directory " + dirIno + ": entries end mid-entry");
        }
        return entries;
    }

    /** @return {@code name} with each control character shown as {@code \xNN}, for messages */
    static String printable(String name) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                out.append(String.format("\\x%02x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** @return the content of a directory with these entries */
    static byte[] encodeDirectory(Map<String, Entry> entries) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Map.Entry<String, Entry> e : entries.entrySet()) {
            byte[] name = FileNames.encode(e.getKey());
            ByteBuffer b = ByteBuffer.allocate(11 + name.length).order(ByteOrder.LITTLE_ENDIAN);
            b.put((byte) FileTypeCodes.code(e.getValue().type())).putLong(e.getValue().ino())
                    .putShort((short) name.length).put(name);
            out.writeBytes(b.array());
        }
        return out.toByteArray();
    }

    /** @return a copy of {@code bytes} */
    static byte[] copy(byte[] bytes) {
        return Arrays.copyOf(bytes, bytes.length);
    }
}
