package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletionException;
import java.util.zip.CRC32C;

/**
 * Where a {@link ZonedDevice} keeps its zones on the backing device, standing in for the write
 * pointers a real drive keeps itself. The backing device holds, in order:
 * <ol>
 *   <li>one geometry block, written once when the zoned device is created;</li>
 *   <li>two copies ("slots") of the zone state, written alternately with a rising sequence number, so
 *       a write torn by a power cut leaves the other copy intact; the newest slot whose checksum
 *       holds is the state;</li>
 *   <li>the zones' data, from {@link #dataStart} on.</li>
 * </ol>
 *
 * <p>Geometry block (little-endian): magic "IOMAPZNG" (8), version 1 (4), block size (4), zone size
 * (8), zone capacity (8), zone count (4), conventional zones (4), max open zones (4), CRC32C of the
 * 44 bytes before it (4); zeroes to the end of the block.
 *
 * <p>State slot, padded with zeroes to whole blocks: magic "IOMAPZNS" (8), sequence number (8), zone
 * count N (4), reserved (4); per zone 16 bytes: write pointer offset from the zone start (long, -1
 * for conventional), flags (int: 1 read-only, 2 offline), reserved (int); CRC32C of everything before
 * it (4).
 *
 * <p>Stateless; the caller serialises writes of slots.
 */
final class ZoneStateTable {
    static final int FLAG_READ_ONLY = 1;
    static final int FLAG_OFFLINE = 2;
    private static final byte[] GEOMETRY_MAGIC = "IOMAPZNG".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STATE_MAGIC = "IOMAPZNS".getBytes(StandardCharsets.US_ASCII);
    private static final int VERSION = 1;
    private static final int GEOMETRY_CRC_AT = 44;
    private static final int SLOT_HEADER_BYTES = 24;
    private static final int ENTRY_BYTES = 16;

    private ZoneStateTable() {
    }

    /**
     * The persistent part of every zone, as one slot holds it.
     *
     * @param sequence the slot's sequence number
     * @param writePointers per zone: write pointer offset from the zone start, -1 for conventional
     * @param flags per zone: {@link #FLAG_READ_ONLY}, {@link #FLAG_OFFLINE}
     */
    record State(long sequence, long[] writePointers, int[] flags) {
        State {
            writePointers = writePointers.clone();
            flags = flags.clone();
        }

        @Override
        public long[] writePointers() {
            return writePointers.clone();
        }

        @Override
        public int[] flags() {
            return flags.clone();
        }

        boolean sameZones(State other) {
            return Arrays.equals(writePointers, other.writePointers) && Arrays.equals(flags, other.flags);
        }
    }

    static int slotBytes(int zoneCount, int blockSize) {
        long bytes = SLOT_HEADER_BYTES + (long) ENTRY_BYTES * zoneCount + Integer.BYTES;
        return Math.toIntExact((bytes + blockSize - 1) / blockSize * blockSize);
    }

    /** @return the backing offset of zone data: past the geometry block and the two slots */
    static long dataStart(int zoneCount, int blockSize) {
        return blockSize + 2L * slotBytes(zoneCount, blockSize);
    }

    static void writeGeometry(BlockDevice backing, ZoneLayout layout) throws IOException {
        ByteBuffer block = ByteBuffer.allocate(backing.blockSize()).order(ByteOrder.LITTLE_ENDIAN);
        block.put(GEOMETRY_MAGIC).putInt(VERSION).putInt(backing.blockSize()).putLong(layout.zoneSize())
                .putLong(layout.zoneCapacity()).putInt(layout.zoneCount()).putInt(layout.conventionalZones())
                .putInt(layout.maxOpenZones());
        block.putInt(crc(block, GEOMETRY_CRC_AT));
        write(backing, 0, block.clear());
    }

    static ZoneLayout readGeometry(BlockDevice backing) throws IOException {
        ByteBuffer block = read(backing, 0, backing.blockSize());
        String where = "zoned device geometry block of " + backing;
        if (!hasMagic(block, GEOMETRY_MAGIC)) {
            throw new CorruptFilesystemException("not a zoned device image: no " + where);
        }
        if (block.getInt(GEOMETRY_CRC_AT) != crc(block, GEOMETRY_CRC_AT)) {
            throw new CorruptFilesystemException(where + " has a bad checksum");
        }
        if (block.getInt(8) != VERSION || block.getInt(12) != backing.blockSize()) {
            throw new CorruptFilesystemException(where + " has version " + block.getInt(8) + " and block size "
                    + block.getInt(12) + "; expected version " + VERSION + " and " + backing.blockSize());
        }
        try {
            return new ZoneLayout(block.getLong(16), block.getLong(24), block.getInt(32), block.getInt(36),
                    block.getInt(40));
        } catch (IllegalArgumentException e) {
            throw new CorruptFilesystemException(where + ": " + e.getMessage());
        }
    }

    /** Writes {@code state} to the slot its sequence number picks and waits for it (not flushed). */
    static void writeState(BlockDevice backing, ZoneLayout layout, State state) throws IOException {
        int zones = layout.zoneCount();
        int bytes = slotBytes(zones, backing.blockSize());
        ByteBuffer slot = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
        slot.put(STATE_MAGIC).putLong(state.sequence()).putInt(zones).putInt(0);
        for (int i = 0; i < zones; i++) {
            slot.putLong(state.writePointers[i]).putInt(state.flags[i]).putInt(0);
        }
        slot.putInt(crc(slot, slot.position()));
        write(backing, backing.blockSize() + (state.sequence() & 1) * bytes, slot.clear());
    }

    /**
     * @return the newest slot that is intact
     * @throws CorruptFilesystemException if neither is
     */
    static State readState(BlockDevice backing, ZoneLayout layout) throws IOException {
        int bytes = slotBytes(layout.zoneCount(), backing.blockSize());
        State newest = null;
        StringBuilder problems = new StringBuilder();
        for (int slot = 0; slot < 2; slot++) {
            long offset = backing.blockSize() + (long) slot * bytes;
            try {
                State state = readSlot(read(backing, offset, bytes), layout.zoneCount(), offset);
                if (newest == null || state.sequence() > newest.sequence()) {
                    newest = state;
                }
            } catch (CorruptFilesystemException e) {
                problems.append(' ').append(e.getMessage()).append(';');
            }
        }
        if (newest == null) {
            throw new CorruptFilesystemException("no intact zone state on " + backing + ":" + problems);
        }
        return newest;
    }

    private static State readSlot(ByteBuffer slot, int zones, long offset) throws CorruptFilesystemException {
        String where = "zone state slot at backing offset " + offset;
        if (!hasMagic(slot, STATE_MAGIC) || slot.getInt(16) != zones) {
            throw new CorruptFilesystemException(where + " is empty or not for " + zones + " zones");
        }
        int crcAt = SLOT_HEADER_BYTES + ENTRY_BYTES * zones;
        if (slot.getInt(crcAt) != crc(slot, crcAt)) {
            throw new CorruptFilesystemException(where + " has a bad checksum");
        }
        long[] pointers = new long[zones];
        int[] flags = new int[zones];
        for (int i = 0; i < zones; i++) {
            pointers[i] = slot.getLong(SLOT_HEADER_BYTES + ENTRY_BYTES * i);
            flags[i] = slot.getInt(SLOT_HEADER_BYTES + ENTRY_BYTES * i + 8);
        }
        return new State(slot.getLong(8), pointers, flags);
    }

    private static boolean hasMagic(ByteBuffer buffer, byte[] magic) {
        byte[] found = new byte[magic.length];
        buffer.get(0, found);
        return Arrays.equals(found, magic);
    }

    private static int crc(ByteBuffer buffer, int length) {
        CRC32C crc = new CRC32C();
        crc.update(buffer.slice(0, length));
        return (int) crc.getValue();
    }

    private static ByteBuffer read(BlockDevice backing, long offset, int bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(bytes);
        backing.read(offset, buffer);
        return buffer.flip().order(ByteOrder.LITTLE_ENDIAN);
    }

    private static void write(BlockDevice backing, long offset, ByteBuffer data) throws IOException {
        try {
            backing.write(offset, data, IoPurpose.METADATA).join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        }
    }
}
