package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.Crc32c;
import dev.iomap.adapter.support.BlockIo;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The store's superblock: two copies, in blocks 0 and 1, written alternately (copy {@code sequence %
 * 2}); the valid copy with the highest sequence wins, so a torn write falls back to the other.
 * the module README has the byte offsets.
 *
 * @param sequence checkpoint number (1 after format)
 * @param blockSize bytes per block and node
 * @param totalBlocks blocks of the device
 * @param journalStart first block of the journal ring
 * @param journalBlocks blocks of the ring
 * @param nonce random number of this format, in every journal batch and entry
 * @param rootBlock block of the root node
 * @param rootLevel level of the root node
 * @param checkpointSeq last transaction the tree holds; replay starts after it
 * @param journalTail block of the ring where replay starts
 * @param freeBlocks free blocks when written (informational)
 * @param nodeBlocks node blocks when written (informational)
 */
record BcachefsSuperblock(long sequence, int blockSize, long totalBlocks, long journalStart, long journalBlocks,
        long nonce, long rootBlock, int rootLevel, long checkpointSeq, long journalTail, long freeBlocks,
        long nodeBlocks) {
    /** "BCHSTOR1" as bytes, little-endian long. */
    static final long MAGIC = 0x31524f5453484342L;
    static final int VERSION = 1;
    /** Bytes used of the superblock's block. */
    static final int BYTES = 128;
    /**
     * The largest checkpoint or transaction sequence a valid copy holds: far more than a device lives
     * through, and low enough that the next one cannot overflow (a forged sequence near 2^63 would wrap
     * the next checkpoint's negative, and its copy number with it).
     */
    static final long MAX_SEQUENCE = 1L << 62;
    /** Blocks before the journal: the two copies. */
    static final long COPIES = 2;

    /** @return the first block after the journal: nodes and data */
    long dataStart() {
        return journalStart + journalBlocks;
    }

    ByteBuffer encode() {
        ByteBuffer buf = ByteBuffer.allocate(blockSize).order(ByteOrder.LITTLE_ENDIAN);
        buf.putLong(0, MAGIC);
        buf.putInt(12, VERSION);
        buf.putLong(16, sequence);
        buf.putInt(24, blockSize);
        buf.putLong(32, totalBlocks);
        buf.putLong(40, journalStart);
        buf.putLong(48, journalBlocks);
        buf.putLong(56, nonce);
        buf.putLong(64, rootBlock);
        buf.putInt(72, rootLevel);
        buf.putLong(80, checkpointSeq);
        buf.putLong(88, journalTail);
        buf.putLong(96, freeBlocks);
        buf.putLong(104, nodeBlocks);
        buf.putInt(8, crc(buf));
        return buf;
    }

    private static int crc(ByteBuffer buf) {
        byte[] bytes = new byte[BYTES];
        buf.get(0, bytes);
        bytes[8] = 0;
        bytes[9] = 0;
        bytes[10] = 0;
        bytes[11] = 0;
        return Crc32c.of(bytes);
    }

    /** @return whether the block holds a superblock copy with a valid magic and checksum */
    static boolean looksValid(ByteBuffer buf) {
        return buf.capacity() >= BYTES && buf.getLong(0) == MAGIC && buf.getInt(8) == crc(buf);
    }

    /**
     * @param buf a block, little-endian
     * @param deviceBlockSize the device's block size
     * @param deviceBlocks the device's block count
     * @param where the copy's name, for messages
     * @return the decoded copy
     * @throws CorruptFileSystemException naming the copy if it is not valid
     */
    static BcachefsSuperblock decode(ByteBuffer buf, int deviceBlockSize, long deviceBlocks, String where)
            throws CorruptFileSystemException {
        if (!looksValid(buf)) {
            throw new CorruptFileSystemException(where + ": bad magic or checksum");
        }
        if (buf.getInt(12) != VERSION) {
            throw new CorruptFileSystemException(where + ": unknown version " + buf.getInt(12));
        }
        BcachefsSuperblock sb = new BcachefsSuperblock(buf.getLong(16), buf.getInt(24), buf.getLong(32), buf.getLong(40),
                buf.getLong(48), buf.getLong(56), buf.getLong(64), buf.getInt(72), buf.getLong(80),
                buf.getLong(88), buf.getLong(96), buf.getLong(104));
        if (sb.blockSize != deviceBlockSize || sb.totalBlocks != deviceBlocks) {
            throw new CorruptFileSystemException(where + ": geometry " + sb.blockSize + " x " + sb.totalBlocks
                    + " does not match the device's " + deviceBlockSize + " x " + deviceBlocks);
        }
        if (sb.sequence < 1 || sb.sequence > MAX_SEQUENCE || sb.checkpointSeq < 0 || sb.checkpointSeq > MAX_SEQUENCE) {
            throw new CorruptFileSystemException(where + ": sequence " + sb.sequence + " or checkpoint seq "
                    + sb.checkpointSeq + " out of range (1 to " + MAX_SEQUENCE + ")");
        }
        if (sb.journalStart != COPIES || sb.journalBlocks < 1 || sb.journalBlocks >= sb.totalBlocks
                || sb.dataStart() >= sb.totalBlocks
                || sb.rootBlock < sb.dataStart() || sb.rootBlock >= sb.totalBlocks
                || sb.rootLevel < 0 || sb.rootLevel > 64
                || sb.journalTail < sb.journalStart || sb.journalTail >= sb.dataStart()) {
            throw new CorruptFileSystemException(where + ": fields out of range: " + sb);
        }
        return sb;
    }

    /**
     * @param device a device
     * @return the valid copy with the higher sequence
     * @throws CorruptFileSystemException if neither copy is valid (naming why for each)
     * @throws IOException if the device cannot be read
     */
    static BcachefsSuperblock readNewest(BlockDevice device) throws IOException {
        long total = device.capacity() / device.blockSize();
        BcachefsSuperblock best = null;
        List<String> problems = new ArrayList<>();
        for (int copy = 0; copy < COPIES; copy++) {
            try {
                BcachefsSuperblock sb = decode(BlockIo.read(device, copy, 1), device.blockSize(), total,
                        "superblock copy " + copy + " (block " + copy + ")");
                if (best == null || sb.sequence() > best.sequence()) {
                    best = sb;
                }
            } catch (CorruptFileSystemException e) {
                problems.add(e.getMessage());
            }
        }
        if (best == null) {
            throw new CorruptFileSystemException("no valid store superblock: " + String.join("; ", problems));
        }
        return best;
    }
}
