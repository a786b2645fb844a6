package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.ns.NamespaceInode;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * One dinode in memory: a whole block, its number the inode number (GFS2's {@code no_addr}). The
 * payload after the {@value #HEADER_BYTES}-byte header holds either the stuffed data (height 0) or
 * the top block pointers of the tree (height 1 and up); directories and symbolic links keep their
 * bytes stuffed while they fit and in a chain of blocks after that (height 1, first chain block in
 * pointer 0). A special file (FIFO, device node, socket) is stuffed and empty; a device node keeps its
 * device number in the first 8 bytes of the stuffed area (as ext4 keeps it in {@code i_block}). Not
 * thread-safe: the mount's metadata lock guards it.
 */
final class Dinode implements NamespaceInode {
    /** Bytes of the header before the stuffed data or pointers. */
    static final int HEADER_BYTES = 112;
    /**
     * Flag bit: data journaled (on a directory: inherited by new children); GFS2's {@code GFS2_DIF_JDATA}
     * (GFS2 marks the directory's with {@code GFS2_DIF_INHERIT_JDATA}, outside this 16-bit word).
     */
    static final int FLAG_JDATA = 0x0001;
    /** Flag bit: {@link FileFlag#IMMUTABLE}, GFS2's {@code GFS2_DIF_IMMUTABLE}. */
    static final int FLAG_IMMUTABLE = 0x0020;
    /** Flag bit: {@link FileFlag#APPEND}, GFS2's {@code GFS2_DIF_APPENDONLY}. */
    static final int FLAG_APPEND = 0x0040;
    /** Flag bit: {@link FileFlag#NO_ATIME}, GFS2's {@code GFS2_DIF_NOATIME}. */
    static final int FLAG_NO_ATIME = 0x0080;
    /** Flag bit: {@link FileFlag#SYNC}, GFS2's {@code GFS2_DIF_SYNC}. */
    static final int FLAG_SYNC = 0x0100;
    /**
     * Flag bit: {@link FileFlag#NO_DUMP}. GFS2 keeps no such flag; this bit is one GFS2 leaves unused
     * (its {@code 0x0200} is {@code GFS2_DIF_SYSTEM}, {@code 0x0400} {@code GFS2_DIF_TOPDIR}: both unused here).
     */
    static final int FLAG_NO_DUMP = 0x0800;
    /** Flag bit: {@link FileFlag#DAX}. GFS2 keeps no such flag; this bit is one GFS2 leaves unused. */
    static final int FLAG_DAX = 0x1000;
    /** Every bit of {@link #flags} that is an inode flag's. */
    static final int FILE_FLAG_BITS = FLAG_JDATA | FLAG_IMMUTABLE | FLAG_APPEND | FLAG_NO_ATIME | FLAG_SYNC
            | FLAG_NO_DUMP | FLAG_DAX;

    /** Each inode flag's bit in {@link #flags}; every {@link FileFlag} has one. */
    private static final Map<FileFlag, Integer> FLAG_BITS = new EnumMap<>(Map.of(
            FileFlag.JOURNAL_DATA, FLAG_JDATA, FileFlag.IMMUTABLE, FLAG_IMMUTABLE, FileFlag.APPEND, FLAG_APPEND,
            FileFlag.NO_ATIME, FLAG_NO_ATIME, FileFlag.SYNC, FLAG_SYNC, FileFlag.NO_DUMP, FLAG_NO_DUMP,
            FileFlag.DAX, FLAG_DAX));

    final long ino;
    FileType type;
    int height;
    int flags;
    int mode;
    int uid;
    int gid;
    int nlink;
    long size;
    long blocks;
    long parent;
    long xattrHead;
    /** A device node's number, else 0. */
    long rdev;
    int xattrLength;
    Instant atime;
    Instant mtime;
    Instant ctime;
    Instant btime;
    /** Stuffed bytes (height 0), the inode's live inline buffer: {@link Gfs2Layout#stuffedCapacity()} long. */
    final byte[] inline;
    /** Top pointers (height at least 1): {@link Gfs2Layout#dinodePointers()} long. */
    final long[] pointers;
    /** Bytes of a directory's entries or a symbolic link's target (regular files: unused). */
    byte[] content = new byte[0];
    /** The {@link #content} array {@link #decodedEntries} was decoded from (a directory's read cache). */
    byte[] decodedFrom;
    /** A directory's entries as decoded from {@link #decodedFrom}; read only. */
    java.util.SortedMap<String, Entries.Entry> decodedEntries;
    /** Bytes of a chained {@link #content} as decoded, before the chain is read ({@link Gfs2Volume} reads it). */
    int chainedLength;
    /** Chain blocks holding {@link #content} when it does not fit stuffed. */
    long[] contentChain = new long[0];
    /**
     * Encoded extended attributes, or null until {@link Gfs2Volume#loadXattrs} reads them: a dinode is
     * decoded without its attribute chain, so the file's data never depends on it.
     */
    byte[] xattrs = new byte[0];
    /** Chain blocks holding {@link #xattrs} (valid once they are loaded). */
    long[] xattrChain = new long[0];

    Dinode(long ino, Gfs2Layout layout) {
        this.ino = ino;
        this.inline = new byte[layout.stuffedCapacity()];
        this.pointers = new long[layout.dinodePointers()];
    }

    /** @return whether the data (or content) is in the dinode block itself */
    boolean stuffed() {
        return height == 0;
    }

    /** @return whether this inode's data goes through the journal */
    boolean jdata() {
        return (flags & FLAG_JDATA) != 0;
    }

    /** @return whether the flags word has a bit for {@code flag} */
    static boolean keeps(FileFlag flag) {
        return FLAG_BITS.containsKey(flag);
    }

    /**
     * @param fileFlags inode flags, each {@link #keeps kept}
     * @return their bits in the flags word
     */
    static int flagBits(Set<FileFlag> fileFlags) {
        int bits = 0;
        for (FileFlag flag : fileFlags) {
            Integer bit = FLAG_BITS.get(flag);
            if (bit == null) {
                throw new IllegalArgumentException("gfs2-like keeps no " + flag + " flag");
            }
            bits |= bit;
        }
        return bits;
    }

    /**
     * @return the inode flags in {@link #flags} (on a directory, {@link FileFlag#JOURNAL_DATA} is the one its
     *     new children inherit)
     */
    Set<FileFlag> fileFlags() {
        Set<FileFlag> set = EnumSet.noneOf(FileFlag.class);
        for (Map.Entry<FileFlag, Integer> e : FLAG_BITS.entrySet()) {
            if ((flags & e.getValue()) != 0) {
                set.add(e.getKey());
            }
        }
        return set;
    }

    /**
     * @param blockSize the block size
     * @return the dinode block image
     */
    ByteBuffer encode(int blockSize) {
        ByteBuffer p = ByteBuffer.allocate(MetadataBlock.maxPayload(blockSize)).order(ByteOrder.LITTLE_ENDIAN);
        p.put((byte) typeCode(type)).put((byte) height).putShort((short) flags).putInt(mode).putInt(uid).putInt(gid)
                .putInt(nlink).putInt(type == FileType.REGULAR ? 0 : content.length).putLong(size).putLong(blocks)
                .putLong(parent).putLong(xattrHead).putInt(xattrLength).putInt(0);
        putTime(p, atime);
        putTime(p, mtime);
        putTime(p, ctime);
        putTime(p, btime);
        if (height == 0 && type.isSpecial()) {
            p.putLong(rdev).put(new byte[inline.length - Long.BYTES]);
        } else if (height == 0) {
            p.put(inline);
        } else {
            for (long pointer : pointers) {
                p.putLong(pointer);
            }
        }
        p.clear();
        return Gfs2Layout.image(new MetadataBlock(Gfs2Layout.DINODE_TYPE, ino, 0, p), blockSize);
    }

    /**
     * Decodes a dinode block (checksum and location checked by the caller's {@link MetadataBlock}).
     *
     * @param block the verified block
     * @param layout the layout
     * @return the dinode; its content chain is read by the caller, its attribute chain when asked
     * @throws CorruptFileSystemException if a field is out of range
     */
    static Dinode decode(MetadataBlock block, Gfs2Layout layout) throws CorruptFileSystemException {
        ByteBuffer p = block.payload().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int expected = MetadataBlock.maxPayload(layout.blockSize());
        if (p.remaining() != expected) {
            throw new CorruptFileSystemException("dinode " + block.blockNo() + ": payload of " + p.remaining()
                    + " bytes, expected " + expected);
        }
        Dinode d = new Dinode(block.blockNo(), layout);
        d.type = typeOf(p.get() & 0xff, block.blockNo());
        d.height = p.get() & 0xff;
        d.flags = p.getShort() & 0xffff;
        d.mode = p.getInt();
        d.uid = p.getInt();
        d.gid = p.getInt();
        d.nlink = p.getInt();
        int contentLength = p.getInt();
        d.size = p.getLong();
        d.blocks = p.getLong();
        d.parent = p.getLong();
        d.xattrHead = p.getLong();
        d.xattrLength = p.getInt();
        p.getInt();
        d.atime = getTime(p, d.ino, "atime");
        d.mtime = getTime(p, d.ino, "mtime");
        d.ctime = getTime(p, d.ino, "ctime");
        d.btime = getTime(p, d.ino, "btime");
        int maxHeight = d.type == FileType.REGULAR ? 16 : d.type.isSpecial() ? 0 : 1;
        if (d.height > maxHeight || d.size < 0 || (d.mode & ~07777) != 0 || contentLength < 0 || d.xattrLength < 0) {
            throw new CorruptFileSystemException("dinode " + d.ino + ": bad height " + d.height + ", size " + d.size
                    + ", mode " + Integer.toOctalString(d.mode) + ", content length " + contentLength
                    + " or attribute length " + d.xattrLength);
        }
        if ((d.xattrHead == 0) != (d.xattrLength == 0)
                || Chain.blocksFor(d.xattrLength, layout.blockSize()) > layout.totalBlocks()) {
            throw new CorruptFileSystemException("dinode " + d.ino + ": attribute chain at block " + d.xattrHead
                    + " holding " + d.xattrLength + " bytes");
        }
        layout.checkPointer(d.xattrHead, "dinode " + d.ino + " attribute chain");
        if (d.height == 0) {
            p.get(d.inline);
            if (d.type.isSpecial()) {
                d.rdev = ByteBuffer.wrap(d.inline).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
                if (d.size != 0 || contentLength != 0 || (!d.type.isDevice() && d.rdev != 0)) {
                    throw new CorruptFileSystemException("dinode " + d.ino + ": a " + d.type + " with size " + d.size
                            + ", content of " + contentLength + " bytes and device number " + d.rdev);
                }
                Arrays.fill(d.inline, (byte) 0);
            } else if (d.type != FileType.REGULAR) {
                if (contentLength > d.inline.length) {
                    throw new CorruptFileSystemException("dinode " + d.ino + ": stuffed content of " + contentLength
                            + " bytes does not fit in " + d.inline.length);
                }
                d.content = Arrays.copyOf(d.inline, contentLength);
            } else if (d.size > d.inline.length) {
                throw new CorruptFileSystemException("dinode " + d.ino + ": stuffed file of " + d.size
                        + " bytes does not fit in " + d.inline.length);
            }
        } else {
            for (int i = 0; i < d.pointers.length; i++) {
                d.pointers[i] = p.getLong();
                layout.checkPointer(d.pointers[i], "dinode " + d.ino + " pointer " + i);
            }
            if (d.type != FileType.REGULAR) {
                if (d.pointers[0] == 0 || contentLength <= d.inline.length
                        || Chain.blocksFor(contentLength, layout.blockSize()) > layout.totalBlocks()) {
                    throw new CorruptFileSystemException("dinode " + d.ino + ": content of " + contentLength
                            + " bytes in a chain from block " + d.pointers[0]);
                }
                d.chainedLength = contentLength;
            }
        }
        if (d.xattrHead != 0) {
            d.xattrs = null;
        }
        return d;
    }

    private static int typeCode(FileType type) {
        return switch (type) {
            case REGULAR -> 1;
            case DIRECTORY -> 2;
            case SYMLINK -> 3;
            case FIFO -> 4;
            case CHARACTER_DEVICE -> 5;
            case BLOCK_DEVICE -> 6;
            case SOCKET -> 7;
        };
    }

    private static FileType typeOf(int code, long ino) throws CorruptFileSystemException {
        return switch (code) {
            case 1 -> FileType.REGULAR;
            case 2 -> FileType.DIRECTORY;
            case 3 -> FileType.SYMLINK;
            case 4 -> FileType.FIFO;
            case 5 -> FileType.CHARACTER_DEVICE;
            case 6 -> FileType.BLOCK_DEVICE;
            case 7 -> FileType.SOCKET;
            default -> throw new CorruptFileSystemException("dinode " + ino + ": unknown type " + code);
        };
    }

    private static void putTime(ByteBuffer p, Instant time) {
        p.putLong(time.getEpochSecond()).putInt(time.getNano());
    }

    private static Instant getTime(ByteBuffer p, long ino, String which) throws CorruptFileSystemException {
        long seconds = p.getLong();
        int nanos = p.getInt();
        if (nanos < 0 || nanos > 999_999_999 || seconds < Instant.MIN.getEpochSecond()
                || seconds > Instant.MAX.getEpochSecond()) {
            throw new CorruptFileSystemException("dinode " + ino + ": " + which + " of " + seconds + " seconds and "
                    + nanos + " nanoseconds is not a time");
        }
        return Instant.ofEpochSecond(seconds, nanos);
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

    @Override
    public void setParent(long dirIno) {
        parent = dirIno;
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
