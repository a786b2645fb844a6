package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.BKey;
import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.adapter.bcachefs.store.KeyValue;
import dev.iomap.adapter.support.ns.FileTypeCodes;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Directory entries (bcachefs's dirents btree): key {@code (dir, hash(name) << 8 | slot)}, value
 * target inode (8 bytes LE), type code (1), name length (1), name bytes. Names with one hash take
 * slots 0 to 255 (the lowest free one), so a lookup scans one hash's 256 offsets and compares names.
 */
final class Dirents {
    /** Slots per name hash. */
    static final int SLOTS = 256;

    /** One entry. */
    record Dirent(BKey key, long ino, FileType type, String name) {
    }

    private Dirents() {
    }

    /** @return the entry named {@code name} in {@code dir}, if any */
    static Optional<Dirent> find(KeyStore store, long dir, String name) throws IOException {
        byte[] bytes = FileNames.encode(name);
        for (KeyValue kv : sameHash(store, dir, bytes)) {
            Dirent d = decode(kv);
            if (Arrays.equals(FileNames.encode(d.name()), bytes)) {
                return Optional.of(d);
            }
        }
        return Optional.empty();
    }

    private static List<KeyValue> sameHash(KeyStore store, long dir, byte[] name) throws IOException {
        long base = Keys.nameHash(name) << 8;
        return store.scan(new BKey(Keys.DIRENTS, dir, base), new BKey(Keys.DIRENTS, dir, base + SLOTS), SLOTS);
    }

    /**
     * @return the key a new entry named {@code name} takes in {@code dir}
     * @throws NoSpaceException if 256 names with its hash exist
     */
    static BKey freeKey(KeyStore store, long dir, String name) throws IOException {
        byte[] bytes = FileNames.encode(name);
        boolean[] used = new boolean[SLOTS];
        long base = Keys.nameHash(bytes) << 8;
        for (KeyValue kv : sameHash(store, dir, bytes)) {
            used[(int) (kv.key().offset() - base)] = true;
        }
        for (int slot = 0; slot < SLOTS; slot++) {
            if (!used[slot]) {
                return new BKey(Keys.DIRENTS, dir, base + slot);
            }
        }
        throw new NoSpaceException("bcachefs-like: directory " + dir + " has " + SLOTS + " names with the hash of "
                + name);
    }

    /** @return the value of an entry */
    static byte[] encode(long ino, FileType type, String name) {
        byte[] bytes = FileNames.encode(name);
        return ByteBuffer.allocate(10 + bytes.length).order(ByteOrder.LITTLE_ENDIAN).putLong(ino)
                .put((byte) FileTypeCodes.code(type)).put((byte) bytes.length).put(bytes).array();
    }

    /** @return the entry of a key */
    static Dirent decode(KeyValue kv) throws CorruptFileSystemException {
        byte[] v = kv.value();
        String where = "directory entry (dir " + kv.key().inode() + ", offset " + kv.key().offset() + ")";
        if (v.length < 11) {
            throw new CorruptFileSystemException(where + " is " + v.length + " bytes");
        }
        ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
        long ino = b.getLong();
        int code = b.get() & 0xff;
        int length = b.get() & 0xff;
        if (length == 0 || v.length != 10 + length || FileTypeCodes.typeOf(code) == null) {
            throw new CorruptFileSystemException(where + " is malformed (type " + code + ", name length " + length + ")");
        }
        byte[] name = Arrays.copyOfRange(v, 10, v.length);
        if (Keys.nameHash(name) != kv.key().offset() >>> 8) {
            throw new CorruptFileSystemException(where + " is not at its name's hash");
        }
        return new Dirent(kv.key(), ino, FileTypeCodes.typeOf(code), FileNames.decode(name));
    }

    /** @return every entry of {@code dir}, in key order */
    static List<Dirent> list(KeyStore store, long dir) throws IOException {
        List<Dirent> out = new ArrayList<>();
        for (KeyValue kv : store.scan(Keys.first(Keys.DIRENTS, dir), Keys.past(Keys.DIRENTS, dir), Integer.MAX_VALUE)) {
            out.add(decode(kv));
        }
        return out;
    }

    /** @return whether {@code dir} has no entry */
    static boolean isEmpty(KeyStore store, long dir) throws IOException {
        return store.scan(Keys.first(Keys.DIRENTS, dir), Keys.past(Keys.DIRENTS, dir), 1).isEmpty();
    }
}
