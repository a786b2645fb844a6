package dev.iomap.testkit.snapfs;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.Xattrs;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The metadata of a snapfs filesystem: inodes, directories and block maps. Serialised whole into a
 * metadata slot at every commit. Not thread-safe (the mount's lock guards it).
 *
 * <p>Names are byte strings ({@link FileNames}): stored as their bytes, kept and listed in byte order.
 *
 * <p>Attributes (mode, owner, group, four times with nanoseconds, a symbolic link's target, extended
 * attributes) follow all inodes in a section of their own, tagged {@link #ATTRIBUTES_MAGIC}, one record
 * per inode in the same order; a payload written before attributes existed ends after the inodes and
 * reads with the defaults of an adapter without POSIX attributes (the one stored modification time as
 * all four times). The inode records keep their old layout, their modification time in milliseconds.
 *
 * <p>A block map entry packs a device block and a state: {@link #PENDING} (allocated by a write, not
 * yet written back: never committed), {@link #UNWRITTEN} (preallocated, reads as zero) or
 * {@link #WRITTEN}.
 */
final class SnapState {
    static final int PENDING = 0;
    static final int UNWRITTEN = 1;
    static final int WRITTEN = 2;
    static final long ROOT = 1;
    /** "ATTR": the start of the attributes section. */
    static final int ATTRIBUTES_MAGIC = 0x41545452;

    /** One file, directory or symbolic link. */
    static final class Inode {
        final long ino;
        final FileType type;
        long size;
        int links = 1;
        /** Permission bits, {@code 07777} at most. */
        int mode;
        int uid;
        int gid;
        Instant atime = Instant.EPOCH;
        Instant mtime = Instant.EPOCH;
        Instant ctime = Instant.EPOCH;
        Instant btime = Instant.EPOCH;
        /** A symbolic link's target (1 to 4095 bytes); null for anything else. */
        byte[] target;
        /** Extended attributes: full name → value, in {@link FileNames#BYTE_ORDER}. */
        final TreeMap<String, byte[]> xattrs = new TreeMap<>(FileNames.BYTE_ORDER);
        /** name → inode, in {@link FileNames#BYTE_ORDER} (names are byte strings in FileNames' form) */
        final TreeMap<String, Long> entries = new TreeMap<>(FileNames.BYTE_ORDER);
        /** file block → device block << 2 | state */
        final TreeMap<Long, Long> blocks = new TreeMap<>();
        /**
         * Bumped whenever a mapping handed out may have changed (writeback completion, frees,
         * conversions): the validity cookie of this inode's mappings. In memory only.
         */
        long mappingSequence;

        /** An inode with its type's default mode, owned by 0, all times the epoch. */
        Inode(long ino, FileType type) {
            this.ino = ino;
            this.type = type;
            this.mode = NewInodeAttributes.defaultMode(type);
        }

        /** Sets all four times. */
        void born(Instant now) {
            atime = now;
            mtime = now;
            ctime = now;
            btime = now;
        }

        /** The contents changed: mtime and ctime. */
        void modified(Instant now) {
            mtime = now;
            ctime = now;
        }
    }

    static long pack(long deviceBlock, int state) {
        return deviceBlock << 2 | state;
    }

    static long deviceBlock(long packed) {
        return packed >>> 2;
    }

    static int state(long packed) {
        return (int) (packed & 3);
    }

    final Map<Long, Inode> inodes = new TreeMap<>();
    long nextIno = 2;

    static SnapState empty() {
        SnapState state = new SnapState();
        state.inodes.put(ROOT, new Inode(ROOT, FileType.DIRECTORY));
        return state;
    }

    /** @return the device blocks a commit of this state references: every mapped block but pending ones */
    BitSet committedBlocks() {
        BitSet blocks = new BitSet();
        for (Inode inode : inodes.values()) {
            for (long packed : inode.blocks.values()) {
                if (state(packed) != PENDING) {
                    blocks.set((int) deviceBlock(packed));
                }
            }
        }
        return blocks;
    }

    /** @return the committed form: pending blocks left out, runs merged, then the attributes section */
    byte[] serialize() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writeInodes(out);
            writeAttributes(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** @return the bytes of {@link #serialize()} before the attributes section */
    int inodesLength() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writeInodes(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.size();
    }

    private void writeInodes(DataOutputStream out) throws IOException {
        out.writeLong(nextIno);
        out.writeInt(inodes.size());
        for (Inode inode : inodes.values()) {
            out.writeLong(inode.ino);
            out.writeByte(inode.type.ordinal());
            out.writeLong(inode.size);
            out.writeInt(inode.links);
            out.writeLong(millis(inode.mtime));
            out.writeInt(inode.entries.size());
            for (Map.Entry<String, Long> entry : inode.entries.entrySet()) {
                writeName(out, entry.getKey());
                out.writeLong(entry.getValue());
            }
            List<long[]> runs = runs(inode);
            out.writeInt(runs.size());
            for (long[] run : runs) {
                out.writeLong(run[0]);
                out.writeLong(run[1]);
                out.writeInt((int) run[2]);
                out.writeByte((int) run[3]);
            }
        }
    }

    /** @return the time in milliseconds, clamped to what a long holds (the exact time is in the attributes) */
    private static long millis(Instant time) {
        try {
            return time.toEpochMilli();
        } catch (ArithmeticException e) {
            return time.isBefore(Instant.EPOCH) ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /**
     * The attributes section: the magic, then per inode (in {@link #inodes}' order) its number, mode,
     * uid, gid, the four times as seconds (i64) and nanoseconds (i32), the target's length (-1 for none)
     * and bytes, the count of extended attributes and each as a name ({@link #writeName}) and a
     * value (i32 length, bytes).
     */
    private void writeAttributes(DataOutputStream out) throws IOException {
        out.writeInt(ATTRIBUTES_MAGIC);
        for (Inode inode : inodes.values()) {
            out.writeLong(inode.ino);
            out.writeInt(inode.mode);
            out.writeInt(inode.uid);
            out.writeInt(inode.gid);
            for (Instant time : List.of(inode.atime, inode.mtime, inode.ctime, inode.btime)) {
                out.writeLong(time.getEpochSecond());
                out.writeInt(time.getNano());
            }
            out.writeInt(inode.target == null ? -1 : inode.target.length);
            if (inode.target != null) {
                out.write(inode.target);
            }
            out.writeInt(inode.xattrs.size());
            for (Map.Entry<String, byte[]> xattr : inode.xattrs.entrySet()) {
                writeName(out, xattr.getKey());
                out.writeInt(xattr.getValue().length);
                out.write(xattr.getValue());
            }
        }
    }

    /** Reads what {@link #writeAttributes} wrote, or sets the defaults of a payload without it. */
    private void readAttributes(DataInputStream in, ByteArrayInputStream rest) throws IOException {
        if (rest.available() == 0) {
            for (Inode inode : inodes.values()) {
                inode.atime = inode.mtime;
                inode.ctime = inode.mtime;
                inode.btime = inode.mtime;
            }
            return;
        }
        if (in.readInt() != ATTRIBUTES_MAGIC) {
            throw new CorruptFileSystemException("snapfs: no attributes section after the inodes");
        }
        for (Inode inode : inodes.values()) {
            long ino = in.readLong();
            if (ino != inode.ino) {
                throw new CorruptFileSystemException("snapfs: attributes of inode " + ino + " where inode " + inode.ino
                        + "'s belong");
            }
            inode.mode = in.readInt();
            inode.uid = in.readInt();
            inode.gid = in.readInt();
            if ((inode.mode & ~NewInodeAttributes.MODE_MASK) != 0) {
                throw new CorruptFileSystemException("snapfs: inode " + ino + " has mode 0"
                        + Integer.toOctalString(inode.mode));
            }
            inode.atime = readTime(in, ino);
            inode.mtime = readTime(in, ino);
            inode.ctime = readTime(in, ino);
            inode.btime = readTime(in, ino);
            int target = in.readInt();
            if (target != -1 && (target < 1 || target > FileNames.MAX_TARGET_BYTES)) {
                throw new CorruptFileSystemException("snapfs: inode " + ino + " has a target of " + target + " bytes");
            }
            if (target > 0) {
                inode.target = new byte[target];
                in.readFully(inode.target);
            }
            int xattrs = in.readInt();
            if (xattrs < 0 || xattrs > rest.available()) {
                throw new CorruptFileSystemException("snapfs: inode " + ino + " has " + xattrs + " extended attributes");
            }
            for (int x = 0; x < xattrs; x++) {
                String name = readName(in);
                int length = in.readInt();
                if (length < 0 || length > Xattrs.MAX_VALUE_BYTES) {
                    throw new CorruptFileSystemException("snapfs: inode " + ino + " has an extended attribute of "
                            + length + " bytes");
                }
                byte[] value = new byte[length];
                in.readFully(value);
                if (inode.xattrs.put(name, value) != null) {
                    throw new CorruptFileSystemException("snapfs: inode " + ino + " has an extended attribute twice");
                }
            }
        }
        if (rest.available() != 0) {
            throw new CorruptFileSystemException("snapfs: " + rest.available() + " bytes after the attributes");
        }
    }

    private static Instant readTime(DataInputStream in, long ino) throws IOException {
        long seconds = in.readLong();
        int nanos = in.readInt();
        if (nanos < 0 || nanos > 999_999_999) {
            throw new CorruptFileSystemException("snapfs: inode " + ino + " has a time with " + nanos + " ns");
        }
        try {
            return Instant.ofEpochSecond(seconds, nanos);
        } catch (DateTimeException e) {
            throw new CorruptFileSystemException("snapfs: inode " + ino + " has a time out of range: " + seconds);
        }
    }

    /**
     * Writes a name as a u16 byte count and its {@link FileNames#encode} bytes, exactly. For a name
     * that is valid UTF-8 with no character above U+FFFF this is what {@code writeUTF} wrote before
     * names were byte strings, so such names on older images read the same.
     */
    private static void writeName(DataOutputStream out, String name) throws IOException {
        byte[] bytes = FileNames.encode(name);
        out.writeShort(bytes.length);
        out.write(bytes);
    }

    /** Reads what {@link #writeName} wrote, as {@link FileNames#decode} gives it. */
    private static String readName(DataInputStream in) throws IOException {
        byte[] bytes = new byte[in.readUnsignedShort()];
        in.readFully(bytes);
        return FileNames.decode(bytes);
    }

    /** @return {fileBlock, deviceBlock, count, state} runs of committed blocks */
    private static List<long[]> runs(Inode inode) {
        List<long[]> runs = new ArrayList<>();
        long[] run = null;
        for (Map.Entry<Long, Long> entry : inode.blocks.entrySet()) {
            int state = state(entry.getValue());
            if (state == PENDING) {
                continue;
            }
            long fileBlock = entry.getKey();
            long device = deviceBlock(entry.getValue());
            if (run != null && run[0] + run[2] == fileBlock && run[1] + run[2] == device && run[3] == state) {
                run[2]++;
            } else {
                run = new long[] {fileBlock, device, 1, state};
                runs.add(run);
            }
        }
        return runs;
    }

    /**
     * Decodes a commit, checking what decoding itself relies on: every mapped run non-empty, inside
     * the data area and of a committed state (pending blocks are never committed). The rules across
     * inodes are {@code SnapAdapter}'s.
     *
     * @param payload the slot's payload
     * @param layout the device's layout
     * @return the state
     * @throws CorruptFileSystemException if the payload does not decode or a run is out of range
     */
    static SnapState deserialize(byte[] payload, SnapLayout layout) throws CorruptFileSystemException {
        SnapState state = new SnapState();
        ByteArrayInputStream rest = new ByteArrayInputStream(payload);
        try (DataInputStream in = new DataInputStream(rest)) {
            state.nextIno = in.readLong();
            int count = in.readInt();
            for (int i = 0; i < count; i++) {
                long ino = in.readLong();
                int type = in.readByte();
                if (type < 0 || type >= FileType.values().length) {
                    throw new CorruptFileSystemException("snapfs: inode " + ino + " has bad type " + type);
                }
                Inode inode = new Inode(ino, FileType.values()[type]);
                inode.size = in.readLong();
                inode.links = in.readInt();
                inode.mtime = Instant.ofEpochMilli(in.readLong());
                int entries = in.readInt();
                for (int e = 0; e < entries; e++) {
                    String name = readName(in);
                    if (inode.entries.put(name, in.readLong()) != null) {
                        throw new CorruptFileSystemException("snapfs: directory " + ino + " has the name '" + name
                                + "' twice");
                    }
                }
                int runs = in.readInt();
                for (int r = 0; r < runs; r++) {
                    long fileBlock = in.readLong();
                    long device = in.readLong();
                    int length = in.readInt();
                    int blockState = in.readByte();
                    if (length < 1 || fileBlock < 0 || fileBlock > SnapMount.MAX_FILE_SIZE / layout.blockSize() - length
                            || device < layout.firstDataBlock() || device > layout.totalBlocks() - length
                            || (blockState != UNWRITTEN && blockState != WRITTEN)) {
                        throw new CorruptFileSystemException("snapfs: inode " + ino + " maps file blocks [" + fileBlock
                                + ", +" + length + ") to device blocks from " + device + " in state " + blockState
                                + ", outside the data area [" + layout.firstDataBlock() + ", " + layout.totalBlocks()
                                + ") or not a committed state");
                    }
                    for (int b = 0; b < length; b++) {
                        inode.blocks.put(fileBlock + b, pack(device + b, blockState));
                    }
                }
                state.inodes.put(ino, inode);
            }
            state.readAttributes(in, rest);
        } catch (CorruptFileSystemException e) {
            throw e;
        } catch (IOException e) {
            throw new CorruptFileSystemException("snapfs: metadata does not decode: " + e);
        }
        return state;
    }
}
