package dev.iomap.testkit.snapfs;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.NoSpaceException;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.OptionalInt;
import java.util.concurrent.CompletionException;
import java.util.zip.CRC32C;

/**
 * Where snapfs keeps things: a superblock in block 0, two metadata slots written alternately (a torn
 * or half-written slot fails its CRC and the other slot, one commit older, is used), then data.
 *
 * @param blockSize filesystem block size
 * @param totalBlocks blocks on the device
 * @param slotBlocks blocks per metadata slot
 */
record SnapLayout(int blockSize, long totalBlocks, int slotBlocks) {
    private static final long SUPER_MAGIC = 0x534E415046533031L; // "SNAPFS01"
    private static final long SLOT_MAGIC = 0x534E41504D455441L; // "SNAPMETA"
    private static final int SLOT_HEADER = 24;
    /** The largest commit sequence number mount accepts: unreachable, and far from overflowing. */
    static final long MAX_SEQUENCE = 1L << 62;

    static SnapLayout forDevice(BlockDevice device, int blockSize) {
        return forCapacity(device.capacity(), blockSize);
    }

    static SnapLayout forCapacity(long capacity, int blockSize) {
        long totalBlocks = capacity / blockSize;
        long slotBytes = Math.min(4L << 20, capacity / 16);
        return new SnapLayout(blockSize, totalBlocks, (int) Math.max(1, slotBytes / blockSize));
    }

    long firstDataBlock() {
        return 1 + 2L * slotBlocks;
    }

    long dataBlocks() {
        return totalBlocks - firstDataBlock();
    }

    /** @return whether device offset 0 carries the snapfs superblock magic */
    static boolean probe(BlockDevice device) throws IOException {
        return probeBlockSize(device).isPresent();
    }

    /**
     * @return the block size the superblock records (unchecked: its CRC is not verified), if device
     *     offset 0 carries the snapfs superblock magic
     */
    static OptionalInt probeBlockSize(BlockDevice device) throws IOException {
        int length = Math.max(device.blockSize(), 512);
        if (device.capacity() < length) {
            return OptionalInt.empty();
        }
        ByteBuffer block = ByteBuffer.allocate(length);
        device.read(0, block);
        return block.getLong(0) == SUPER_MAGIC ? OptionalInt.of(block.getInt(8)) : OptionalInt.empty();
    }

    void writeSuperblock(BlockDevice device) throws IOException {
        ByteBuffer block = ByteBuffer.allocate(blockSize);
        block.putLong(SUPER_MAGIC).putInt(blockSize).putLong(totalBlocks).putInt(slotBlocks);
        block.putInt(crc(block.array(), 0, block.position()));
        write(device, 0, block.rewind(), IoPurpose.METADATA);
    }

    static SnapLayout readSuperblock(BlockDevice device) throws IOException {
        ByteBuffer block = ByteBuffer.allocate(Math.max(device.blockSize(), 512));
        device.read(0, block);
        block.flip();
        if (block.getLong() != SUPER_MAGIC) {
            throw new CorruptFileSystemException("snapfs: no superblock magic at device offset 0");
        }
        int blockSize = block.getInt();
        long totalBlocks = block.getLong();
        int slotBlocks = block.getInt();
        int stored = block.getInt();
        if (stored != crc(block.array(), 0, 24)) {
            throw new CorruptFileSystemException("snapfs: superblock checksum mismatch at device offset 0");
        }
        if (Integer.bitCount(blockSize) != 1 || blockSize < device.blockSize() || totalBlocks < 0
                || totalBlocks > device.capacity() / blockSize || slotBlocks <= 0) {
            throw new CorruptFileSystemException("snapfs: superblock geometry does not fit the device");
        }
        SnapLayout expected = forCapacity(totalBlocks * blockSize, blockSize);
        if (slotBlocks != expected.slotBlocks() || expected.dataBlocks() < 16) {
            throw new CorruptFileSystemException("snapfs: superblock says " + slotBlocks + "-block metadata slots for "
                    + totalBlocks + " blocks; format makes " + expected.slotBlocks() + "-block ones");
        }
        return new SnapLayout(blockSize, totalBlocks, slotBlocks);
    }

    /** @return the largest commit payload a slot holds */
    long slotPayloadCapacity() {
        return (long) slotBlocks * blockSize - SLOT_HEADER;
    }

    /** Writes a commit into slot {@code sequence % 2}. */
    void writeSlot(BlockDevice device, long sequence, byte[] payload) throws IOException {
        long bytes = SLOT_HEADER + (long) payload.length;
        long capacity = (long) slotBlocks * blockSize;
        if (bytes > capacity) {
            throw new NoSpaceException("snapfs: metadata of " + bytes + " bytes does not fit a slot of " + capacity);
        }
        ByteBuffer slot = ByteBuffer.allocate((int) ((bytes + blockSize - 1) / blockSize * blockSize));
        slot.putLong(SLOT_MAGIC).putLong(sequence).putInt(payload.length).putInt(0).put(payload);
        slot.putInt(20, crcOfSlot(slot.array(), payload.length));
        write(device, slotOffset(sequence), slot.rewind(), IoPurpose.METADATA);
    }

    /** A decoded slot. */
    record Slot(long sequence, byte[] payload) {
    }

    /**
     * Commit {@code n} is written to slot {@code n % 2}, so two valid slots hold consecutive commits
     * (a torn commit fails its checksum): a slot holding a commit of the other slot's parity, or two
     * valid slots whose commits are not consecutive, are damage no power cut leaves.
     *
     * @return the valid slot with the higher sequence, or null
     * @throws CorruptFileSystemException if both slots verify but do not hold consecutive commits
     */
    Slot readNewestSlot(BlockDevice device) throws IOException {
        Slot[] slots = {readSlot(device, 0), readSlot(device, 1)};
        if (slots[0] != null && slots[1] != null && Math.abs(slots[0].sequence() - slots[1].sequence()) != 1) {
            throw new CorruptFileSystemException("snapfs: the metadata slots hold commits " + slots[0].sequence()
                    + " and " + slots[1].sequence() + ", which are not consecutive");
        }
        Slot best = null;
        for (Slot slot : slots) {
            if (slot != null && (best == null || slot.sequence() > best.sequence())) {
                best = slot;
            }
        }
        return best;
    }

    private Slot readSlot(BlockDevice device, int which) throws IOException {
        long offset = slotOffset(which);
        ByteBuffer first = ByteBuffer.allocate(blockSize);
        device.read(offset, first);
        first.flip();
        if (first.getLong() != SLOT_MAGIC) {
            return null;
        }
        long sequence = first.getLong();
        int length = first.getInt();
        int stored = first.getInt();
        if (length < 0 || SLOT_HEADER + (long) length > (long) slotBlocks * blockSize || sequence < 0
                || sequence % 2 != which) {
            return null;
        }
        long slotBytes = (SLOT_HEADER + (long) length + blockSize - 1) / blockSize * blockSize;
        ByteBuffer all = ByteBuffer.allocate((int) slotBytes);
        device.read(offset, all);
        if (stored != crcOfSlot(all.array(), length)) {
            return null;
        }
        byte[] payload = new byte[length];
        System.arraycopy(all.array(), SLOT_HEADER, payload, 0, length);
        return new Slot(sequence, payload);
    }

    private long slotOffset(long sequence) {
        return (1 + (sequence % 2) * slotBlocks) * blockSize;
    }

    private static int crcOfSlot(byte[] slot, int payloadLength) {
        CRC32C crc = new CRC32C();
        crc.update(slot, 8, 12);
        crc.update(slot, SLOT_HEADER, payloadLength);
        return (int) crc.getValue();
    }

    private static int crc(byte[] bytes, int from, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, from, length);
        return (int) crc.getValue();
    }

    static void write(BlockDevice device, long offset, ByteBuffer data, IoPurpose purpose) throws IOException {
        try {
            device.write(offset, data, purpose).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw e;
        }
    }
}
