package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.support.ns.FileTypeCodes;
import dev.iomap.adapter.support.ns.NamespaceInode;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileType;
import dev.iomap.api.NotSupportedException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;

/**
 * An inode as its key {@code (INODES, ino, 0)} holds it (bcachefs's {@code bch_inode}). Mutable: the
 * mount keeps the current copy of every inode it has touched and puts it in each transaction that
 * changes it, under the mount's metadata lock.
 */
final class InodeRecord implements NamespaceInode {
    /** Encoded size. */
    static final int BYTES = 84;
    /** Encoded size of a device node's inode: the device number follows the common fields. */
    static final int DEVICE_BYTES = BYTES + 8;
    /** The largest size of any inode, the format's limit (1 TiB): a larger one is damage. */
    static final long MAX_SIZE = 1L << 40;
    /** Flag bit: {@link FileFlag#SYNC} (bcachefs's {@code BCH_INODE_sync}, bit 0 of {@code bi_flags}). */
    static final int FLAG_SYNC = 1;
    /** Flag bit: {@link FileFlag#IMMUTABLE} ({@code BCH_INODE_immutable}). */
    static final int FLAG_IMMUTABLE = 1 << 1;
    /** Flag bit: {@link FileFlag#APPEND} ({@code BCH_INODE_append}). */
    static final int FLAG_APPEND = 1 << 2;
    /** Flag bit: {@link FileFlag#NO_DUMP} ({@code BCH_INODE_nodump}). */
    static final int FLAG_NO_DUMP = 1 << 3;
    /** Flag bit: {@link FileFlag#NO_ATIME} ({@code BCH_INODE_noatime}). */
    static final int FLAG_NO_ATIME = 1 << 4;
    /**
     * Flag bit: {@link FileFlag#DAX}. bcachefs has no DAX flag; this model keeps it at bit 16, clear of the
     * bits bcachefs gives its own inode states (5 and up).
     */
    static final int FLAG_DAX = 1 << 16;
    /** Every bit the flags field may have; any other is damage. */
    static final int KNOWN_FLAGS = FLAG_SYNC | FLAG_IMMUTABLE | FLAG_APPEND | FLAG_NO_DUMP | FLAG_NO_ATIME
            | FLAG_DAX;

    final long ino;
    FileType type;
    int mode;
    int uid;
    int gid;
    int nlink;
    /** The size on the device (what survives a crash). */
    long size;
    Instant atime;
    Instant mtime;
    Instant ctime;
    Instant btime;
    /**
     * The inode flags (chattr), as bits {@code FLAG_*} of the value's u32 at offset 56: bcachefs's
     * {@code bi_flags}. Images written before flags were kept hold 0 there, so they read as no flags.
     */
    int flags;
    long generation;
    /** Parent directory (directories only; 0 otherwise). */
    long parent;
    /** A device node's number, else 0 (encoded only for a device node). */
    long rdev;
    /** Live blocks of this inode's extents ({@link ExtentValue#liveBlocks()} summed; a shared block counts in each file). */
    long blocks;

    InodeRecord(long ino) {
        this.ino = ino;
    }

    /** @return the value of the inode's key */
    byte[] encode() {
        boolean device = type.isDevice();
        ByteBuffer b = ByteBuffer.allocate(device ? DEVICE_BYTES : BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) FileTypeCodes.code(type)).put((byte) 0).putShort((short) mode);
        b.putInt(uid).putInt(gid).putInt(nlink).putLong(size);
        for (Instant t : new Instant[] {atime, mtime, ctime, btime}) {
            b.putLong(nanos(t));
        }
        b.putInt(flags).putLong(generation).putLong(parent).putLong(blocks);
        if (device) {
            b.putLong(rdev);
        }
        return b.array();
    }

    /**
     * @param ino the inode number (from the key)
     * @param value the key's value
     * @return the inode
     * @throws CorruptFileSystemException if the value is not an inode
     */
    static InodeRecord decode(long ino, byte[] value) throws CorruptFileSystemException {
        if (value.length == 0) {
            throw new CorruptFileSystemException("inode " + ino + " has an empty value");
        }
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        InodeRecord r = new InodeRecord(ino);
        int code = b.get() & 0xff;
        r.type = FileTypeCodes.typeOf(code);
        if (r.type == null) {
            throw new CorruptFileSystemException("inode " + ino + " has type code " + code);
        }
        int expected = r.type.isDevice() ? DEVICE_BYTES : BYTES;
        if (value.length != expected) {
            throw new CorruptFileSystemException("inode " + ino + " (" + r.type + ") has a value of " + value.length
                    + " bytes, not " + expected);
        }
        b.get();
        r.mode = b.getShort() & 0xffff;
        if ((r.mode & ~07777) != 0) {
            throw new CorruptFileSystemException("inode " + ino + " has mode " + Integer.toOctalString(r.mode));
        }
        r.uid = b.getInt();
        r.gid = b.getInt();
        r.nlink = b.getInt();
        r.size = b.getLong();
        if (r.nlink < 0 || r.size < 0) {
            throw new CorruptFileSystemException("inode " + ino + " has link count " + r.nlink + " and size " + r.size);
        }
        if (r.size > MAX_SIZE) {
            throw new CorruptFileSystemException("inode " + ino + " has size " + r.size
                    + ", past the format's largest file size " + MAX_SIZE);
        }
        r.atime = instant(b.getLong());
        r.mtime = instant(b.getLong());
        r.ctime = instant(b.getLong());
        r.btime = instant(b.getLong());
        r.flags = b.getInt();
        if ((r.flags & ~KNOWN_FLAGS) != 0) {
            throw new CorruptFileSystemException("inode " + ino + " has flags 0x" + Integer.toHexString(r.flags)
                    + " (unknown bits 0x" + Integer.toHexString(r.flags & ~KNOWN_FLAGS) + ")");
        }
        r.generation = b.getLong();
        r.parent = b.getLong();
        r.blocks = b.getLong();
        if (r.type.isDevice()) {
            r.rdev = b.getLong();
        }
        if (r.type.isSpecial() && (r.size != 0 || r.blocks != 0)) {
            throw new CorruptFileSystemException("inode " + ino + " is a " + r.type + " with size " + r.size
                    + " and " + r.blocks + " blocks (a special file has no data)");
        }
        return r;
    }

    /** @return a copy (for a transaction that may be abandoned) */
    InodeRecord copy() {
        InodeRecord r = new InodeRecord(ino);
        r.type = type;
        r.mode = mode;
        r.uid = uid;
        r.gid = gid;
        r.nlink = nlink;
        r.size = size;
        r.atime = atime;
        r.mtime = mtime;
        r.ctime = ctime;
        r.btime = btime;
        r.flags = flags;
        r.generation = generation;
        r.parent = parent;
        r.blocks = blocks;
        r.rdev = rdev;
        return r;
    }

    /**
     * @param flags inode flags
     * @return their bits in the flags field
     * @throws NotSupportedException for a flag this format does not keep ({@link FileFlag#JOURNAL_DATA})
     */
    static int flagBits(Set<FileFlag> flags) throws NotSupportedException {
        int bits = 0;
        for (FileFlag flag : flags) {
            bits |= switch (flag) {
                case SYNC -> FLAG_SYNC;
                case IMMUTABLE -> FLAG_IMMUTABLE;
                case APPEND -> FLAG_APPEND;
                case NO_DUMP -> FLAG_NO_DUMP;
                case NO_ATIME -> FLAG_NO_ATIME;
                case DAX -> FLAG_DAX;
                case JOURNAL_DATA -> throw new NotSupportedException("bcachefs-like keeps no " + flag
                        + " flag (it has no journaled data)");
            };
        }
        return bits;
    }

    /**
     * @param bits a flags field (only {@link #KNOWN_FLAGS} bits: decode refuses others)
     * @return the inode flags it holds
     */
    static Set<FileFlag> fileFlags(int bits) {
        Set<FileFlag> flags = EnumSet.noneOf(FileFlag.class);
        if ((bits & FLAG_SYNC) != 0) {
            flags.add(FileFlag.SYNC);
        }
        if ((bits & FLAG_IMMUTABLE) != 0) {
            flags.add(FileFlag.IMMUTABLE);
        }
        if ((bits & FLAG_APPEND) != 0) {
            flags.add(FileFlag.APPEND);
        }
        if ((bits & FLAG_NO_DUMP) != 0) {
            flags.add(FileFlag.NO_DUMP);
        }
        if ((bits & FLAG_NO_ATIME) != 0) {
            flags.add(FileFlag.NO_ATIME);
        }
        if ((bits & FLAG_DAX) != 0) {
            flags.add(FileFlag.DAX);
        }
        return flags;
    }

    /** @return nanoseconds since the epoch, saturated to the range of a long (years 1677 to 2262) */
    private static long nanos(Instant t) {
        try {
            return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
        } catch (ArithmeticException e) {
            return t.getEpochSecond() < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    private static Instant instant(long nanos) {
        return Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
    }

    @Override
    public long ino() {
        return ino;
    }

    @Override
    public FileType type() {
        return type;
    }

    @Override
    public int mode() {
        return mode;
    }

    @Override
    public int gid() {
        return gid;
    }

    @Override
    public int linkCount() {
        return nlink;
    }

    @Override
    public void setLinkCount(int count) {
        nlink = count;
    }

    /** Sets the parent of a directory; a file's stays 0. */
    @Override
    public void setParent(long dirIno) {
        parent = type == FileType.DIRECTORY ? dirIno : 0;
    }

    @Override
    public void setCtime(Instant now) {
        ctime = now;
    }

    @Override
    public void setMtimeAndCtime(Instant now) {
        mtime = now;
        ctime = now;
    }
}
