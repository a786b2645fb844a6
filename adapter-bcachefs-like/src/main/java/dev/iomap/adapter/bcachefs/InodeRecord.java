package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.support.ns.FileTypeCodes;
import dev.iomap.adapter.support.ns.NamespaceInode;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Instant;

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
