package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.BKey;

/**
 * The filesystem's B-trees and the keys in them (the store's btree 0 is its own allocation tree).
 * Every key is {@code (btree, inode, offset)}; see the module README for the values.
 */
final class Keys {
    /** Config and counters: {@code (0, 0)} the format options, {@code (0, 1)} the next inode number. */
    static final int CONFIG = 1;
    /** Inodes: {@code (ino, 0)} → {@link InodeRecord}. */
    static final int INODES = 2;
    /** Directory entries: {@code (dir, hash << 8 | slot)} → target, type, name. */
    static final int DIRENTS = 3;
    /** Extended attributes: {@code (ino, chunk)} → a chunk of the inode's encoded attribute set. */
    static final int XATTRS = 4;
    /** Symbolic link targets: {@code (ino, chunk)} → a chunk of the target. */
    static final int SYMLINKS = 5;
    /** Data extents: {@code (ino, end block)} → {@link ExtentValue}. */
    static final int EXTENTS = 6;
    /** Pending work for mount: {@code (ino, 0)} free the unlinked inode, {@code (ino, 1)} drop extents past EOF. */
    static final int PENDING = 7;

    /** Offset of a pending key: the inode is unlinked and freed at evict or at the next mount. */
    static final long PENDING_ORPHAN = 0;
    /** Offset of a pending key: extents past the inode's size are still to be dropped. */
    static final long PENDING_TRUNCATE = 1;

    /** Inode number of the root directory. */
    static final long ROOT_INO = 1;

    private Keys() {
    }

    static BKey config() {
        return new BKey(CONFIG, 0, 0);
    }

    static BKey nextIno() {
        return new BKey(CONFIG, 0, 1);
    }

    static BKey inode(long ino) {
        return new BKey(INODES, ino, 0);
    }

    static BKey extent(long ino, long endBlock) {
        return new BKey(EXTENTS, ino, endBlock);
    }

    static BKey pending(long ino, long what) {
        return new BKey(PENDING, ino, what);
    }

    /** @return the first key of {@code btree} for {@code ino} */
    static BKey first(int btree, long ino) {
        return new BKey(btree, ino, 0);
    }

    /** @return the first key past every key of {@code btree} for {@code ino} */
    static BKey past(int btree, long ino) {
        return ino == -1L ? new BKey(btree + 1, 0, 0) : new BKey(btree, ino + 1, 0);
    }

    /**
     * The hash of a directory entry's name: 56 bits of FNV-1a 64, so that {@code hash << 8 | slot}
     * leaves 256 slots for names with one hash.
     *
     * @param name the name's bytes
     * @return the hash, below {@code 2^56}
     */
    static long nameHash(byte[] name) {
        long h = 0xcbf29ce484222325L;
        for (byte b : name) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return (h ^ (h >>> 56)) & ((1L << 56) - 1);
    }
}
