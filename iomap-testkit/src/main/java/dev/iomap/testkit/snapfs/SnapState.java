package dev.iomap.testkit.snapfs;

import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
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
 * <p>A block map entry packs a device block and a state: {@link #PENDING} (allocated by a write, not
 * yet written back: never committed), {@link #UNWRITTEN} (preallocated, reads as zero) or
 * {@link #WRITTEN}.
 */
final class SnapState {
    static final int PENDING = 0;
    static final int UNWRITTEN = 1;
    static final int WRITTEN = 2;
    static final long ROOT = 1;

    /** One file or directory. */
    static final class Inode {
        final long ino;
        final FileType type;
        long size;
        int links = 1;
        long modified;
        /** name → inode, in {@link FileNames#BYTE_ORDER} (names are byte strings in FileNames' form) */
        final TreeMap<String, Long> entries = new TreeMap<>(FileNames.BYTE_ORDER);
        /** file block → device block << 2 | state */
        final TreeMap<Long, Long> blocks = new TreeMap<>();
        /**
         * Bumped whenever a mapping handed out may have changed (writeback completion, frees,
         * conversions): the validity cookie of this inode's mappings. In memory only.
         */
        long mappingSequence;

        Inode(long ino, FileType type) {
            this.ino = ino;
            this.type = type;
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

    /** @return the committed form: pending blocks left out, runs merged */
    byte[] serialize() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeLong(nextIno);
            out.writeInt(inodes.size());
            for (Inode inode : inodes.values()) {
                out.writeLong(inode.ino);
                out.writeByte(inode.type.ordinal());
                out.writeLong(inode.size);
                out.writeInt(inode.links);
                out.writeLong(inode.modified);
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
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
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
     * @throws CorruptFilesystemException if the payload does not decode or a run is out of range
     */
    static SnapState deserialize(byte[] payload, SnapLayout layout) throws CorruptFilesystemException {
        SnapState state = new SnapState();
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload))) {
            state.nextIno = in.readLong();
            int count = in.readInt();
            for (int i = 0; i < count; i++) {
                long ino = in.readLong();
                int type = in.readByte();
                if (type < 0 || type >= FileType.values().length) {
                    throw new CorruptFilesystemException("snapfs: inode " + ino + " has bad type " + type);
                }
                Inode inode = new Inode(ino, FileType.values()[type]);
                inode.size = in.readLong();
                inode.links = in.readInt();
                inode.modified = in.readLong();
                int entries = in.readInt();
                for (int e = 0; e < entries; e++) {
                    String name = readName(in);
                    if (inode.entries.put(name, in.readLong()) != null) {
                        throw new CorruptFilesystemException("snapfs: directory " + ino + " has the name '" + name
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
                        throw new CorruptFilesystemException("snapfs: inode " + ino + " maps file blocks [" + fileBlock
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
        } catch (CorruptFilesystemException e) {
            throw e;
        } catch (IOException e) {
            throw new CorruptFilesystemException("snapfs: metadata does not decode: " + e);
        }
        return state;
    }
}
