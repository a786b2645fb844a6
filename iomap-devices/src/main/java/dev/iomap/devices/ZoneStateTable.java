package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.zip.CRC32C;

/**
 * Where a {@link ZonedDevice} keeps its zones on the backing device, standing in for the write
 * pointers a real drive keeps itself. The backing device holds, in order:
 * <ol>
 *   <li>one geometry block, written once when the zoned device is created;</li>
 *   <li>two copies ("slots") of the zone state, each verified by its checksum and by the ranges of
 *       what it holds; the newest slot that verifies is the state;</li>
 *   <li>the zones' data, from {@link #dataStart} on.</li>
 * </ol>
 *
 * <p><b>Why a damaged slot cannot roll back an fsync.</b> A new state is written to <em>both</em>
 * slots, one after the other, each write followed by a flush ({@link #writeState}); the device's
 * flush, and so an fsync, returns only after the second. So whenever a state has been promised
 * durable, both slots hold it, or one holds a later state and the other this one (a later update
 * was interrupted). Losing either slot then leaves a slot holding the promised state or a later one:
 * a single damaged slot, whether torn by a power cut or hit by a bad sector later, never takes back
 * a write pointer, a reset or a finish that was promised, and using the other slot is exact. The
 * state is not guessed from the zone data, which could not be exact: zeroes are valid data, and
 * bytes past a write pointer may be stale data of a reset zone or writes that were never flushed.
 * Damage to both slots leaves nothing exact to use, and {@link #readState} refuses with one line.
 * A slot that does not verify is reported ({@link Slots#problems}), and the device rewrites both at
 * its next flush.
 *
 * <p>Geometry block (little-endian): magic "IOMAPZNG" (8), version 1 (4), block size (4), zone size
 * (8), zone capacity (8), zone count (4), conventional zones (4), max open zones (4), CRC32C of the
 * 44 bytes before it (4); zeroes to the end of the block.
 *
 * <p>State slot, padded with zeroes to whole blocks: magic "IOMAPZNS" (8), sequence number (8), zone
 * count N (4), reserved (4); per zone 16 bytes: write pointer offset from the zone start (long, -1
 * for conventional), flags (int: 1 read-only, 2 offline), reserved (int); CRC32C of everything before
 * it (4). A slot verifies if its magic, zone count and checksum hold and every write pointer is -1 for
 * a conventional zone, and a whole number of blocks within the capacity for a sequential one.
 * (Images written before both slots were written each time alternate their sequence numbers; they
 * read the same way.)
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

    /**
     * @param backing any device: the geometry block's fields all lie in its first 512 bytes
     * @return the block size the geometry block at offset 0 records, if it is there with its
     *     checksum intact; 0 if not
     */
    static int recordedBlockSize(BlockDevice backing) throws IOException {
        if (backing.capacity() < backing.blockSize()) {
            return 0;
        }
        ByteBuffer block = read(backing, 0, backing.blockSize());
        if (!hasMagic(block, GEOMETRY_MAGIC) || block.getInt(GEOMETRY_CRC_AT) != crc(block, GEOMETRY_CRC_AT)) {
            return 0;
        }
        return block.getInt(12);
    }

    static ZoneLayout readGeometry(BlockDevice backing) throws IOException {
        ByteBuffer block = read(backing, 0, backing.blockSize());
        String where = "zoned device geometry block of " + backing;
        if (!hasMagic(block, GEOMETRY_MAGIC)) {
            throw new CorruptFileSystemException("not a zoned device image: no " + where);
        }
        if (block.getInt(GEOMETRY_CRC_AT) != crc(block, GEOMETRY_CRC_AT)) {
            throw new CorruptFileSystemException(where + " has a bad checksum");
        }
        if (block.getInt(8) != VERSION || block.getInt(12) != backing.blockSize()) {
            throw new CorruptFileSystemException(where + " has version " + block.getInt(8) + " and block size "
                    + block.getInt(12) + "; expected version " + VERSION + " and " + backing.blockSize());
        }
        try {
            return new ZoneLayout(block.getLong(16), block.getLong(24), block.getInt(32), block.getInt(36),
                    block.getInt(40));
        } catch (IllegalArgumentException e) {
            throw new CorruptFileSystemException(where + ": " + e.getMessage());
        }
    }

    /**
     * Writes {@code state} to slot 0, flushes, writes it to slot 1 and flushes: durable on return, and
     * a cut at any point leaves one slot holding this state or the one before it.
     */
    static void writeState(BlockDevice backing, ZoneLayout layout, State state) throws IOException {
        int zones = layout.zoneCount();
        int bytes = slotBytes(zones, backing.blockSize());
        ByteBuffer slot = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
        slot.put(STATE_MAGIC).putLong(state.sequence()).putInt(zones).putInt(0);
        for (int i = 0; i < zones; i++) {
            slot.putLong(state.writePointers[i]).putInt(state.flags[i]).putInt(0);
        }
        slot.putInt(crc(slot, slot.position()));
        for (int copy = 0; copy < 2; copy++) {
            write(backing, slotOffset(backing, bytes, copy), slot.clear());
            backing.flush();
        }
    }

    private static long slotOffset(BlockDevice backing, int slotBytes, int slot) {
        return backing.blockSize() + (long) slot * slotBytes;
    }

    /**
     * What the two slots held when read.
     *
     * @param state the newest slot that verifies
     * @param problems one line per slot that did not verify, and one if two slots of the same sequence
     *     number differ; empty if both are sound
     * @param identical whether both slots verify and hold the same state (nothing to rewrite)
     */
    record Slots(State state, List<String> problems, boolean identical) {
        Slots {
            problems = List.copyOf(problems);
        }
    }

    /**
     * @return the newest slot that verifies, and what is wrong with the slots
     * @throws CorruptFileSystemException if neither verifies
     */
    static Slots readState(BlockDevice backing, ZoneLayout layout) throws IOException {
        int bytes = slotBytes(layout.zoneCount(), backing.blockSize());
        State[] found = new State[2];
        String[] damage = new String[2];
        for (int slot = 0; slot < 2; slot++) {
            long offset = slotOffset(backing, bytes, slot);
            try {
                found[slot] = readSlot(read(backing, offset, bytes), layout, backing.blockSize(),
                        "zone state slot " + slot + " at backing offset " + offset);
            } catch (CorruptFileSystemException e) {
                damage[slot] = e.getMessage();
            }
        }
        if (found[0] == null && found[1] == null) {
            throw new CorruptFileSystemException("no intact zone state on " + backing + ": " + damage[0] + "; "
                    + damage[1] + " (both copies damaged: the write pointers cannot be recovered exactly)");
        }
        int newest = found[1] == null || (found[0] != null && found[0].sequence() >= found[1].sequence()) ? 0 : 1;
        State state = found[newest];
        List<String> problems = new ArrayList<>();
        for (int slot = 0; slot < 2; slot++) {
            if (damage[slot] != null) {
                problems.add(damage[slot] + "; using slot " + newest + " (sequence " + state.sequence()
                        + "), which holds every state a flush returned for");
            }
        }
        boolean sameSequence = found[0] != null && found[1] != null && found[0].sequence() == found[1].sequence();
        if (sameSequence && !found[0].sameZones(found[1])) {
            problems.add("zone state slots 0 and 1 both have sequence " + state.sequence()
                    + " but differ; using slot 0");
        }
        return new Slots(state, problems, sameSequence && found[0].sameZones(found[1]));
    }

    private static State readSlot(ByteBuffer slot, ZoneLayout layout, int blockSize, String where)
            throws CorruptFileSystemException {
        int zones = layout.zoneCount();
        if (!hasMagic(slot, STATE_MAGIC) || slot.getInt(16) != zones) {
            throw new CorruptFileSystemException(where + " is empty or not for " + zones + " zones");
        }
        int crcAt = SLOT_HEADER_BYTES + ENTRY_BYTES * zones;
        if (slot.getInt(crcAt) != crc(slot, crcAt)) {
            throw new CorruptFileSystemException(where + " has a bad checksum");
        }
        long[] pointers = new long[zones];
        int[] flags = new int[zones];
        for (int i = 0; i < zones; i++) {
            pointers[i] = slot.getLong(SLOT_HEADER_BYTES + ENTRY_BYTES * i);
            flags[i] = slot.getInt(SLOT_HEADER_BYTES + ENTRY_BYTES * i + 8);
            checkEntry(layout, blockSize, i, pointers[i], where);
        }
        return new State(slot.getLong(8), pointers, flags);
    }

    private static void checkEntry(ZoneLayout layout, int blockSize, int zone, long pointer, String where)
            throws CorruptFileSystemException {
        if (!layout.isSequential(zone)) {
            if (pointer != -1) {
                throw new CorruptFileSystemException(where + " gives conventional zone " + zone
                        + " write pointer offset " + pointer + " (expected -1)");
            }
            return;
        }
        if (pointer < 0 || pointer > layout.zoneCapacity() || pointer % blockSize != 0) {
            throw new CorruptFileSystemException(where + " gives zone " + zone + " write pointer offset "
                    + pointer + ", outside its capacity " + layout.zoneCapacity() + " or not block aligned");
        }
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
