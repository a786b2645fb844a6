package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.Crc32c;
import dev.iomap.adapter.support.BlockIo;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The store's superblock: two copies, in blocks 0 and 1, written alternately (copy {@code sequence %
 * 2}); the valid copy with the highest sequence wins, so a torn write falls back to the other.
 * the module README has the byte offsets.
 *
 * <p>The label (bcachefs's {@code BCH_SB_LABEL_SIZE} bytes, NUL-padded UTF-8) lies just after the 128
 * bytes the main checksum covers, at {@link #LABEL_OFFSET}; its own CRC32C sits at
 * {@link #LABEL_CRC_OFFSET}, inside the checksummed bytes, and is 0 for an empty label. Images written
 * before the label was kept have zeros in both, so they read as no label; their main checksum is
 * unchanged, as is that of a superblock without a label.
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
 * @param label the filesystem's label, empty if none (at most {@link #LABEL_BYTES} bytes of UTF-8, no NUL)
 */
record BcachefsSuperblock(long sequence, int blockSize, long totalBlocks, long journalStart, long journalBlocks,
        long nonce, long rootBlock, int rootLevel, long checkpointSeq, long journalTail, long freeBlocks,
        long nodeBlocks, String label) {
    /** "BCHSTOR1" as bytes, little-endian long. */
    static final long MAGIC = 0x31524f5453484342L;
    static final int VERSION = 1;
    /** Bytes the main checksum covers (the label follows them). */
    static final int BYTES = 128;
    /**
     * The largest checkpoint or transaction sequence a valid copy holds: far more than a device lives
     * through, and low enough that the next one cannot overflow (a forged sequence near 2^63 would wrap
     * the next checkpoint's negative, and its copy number with it).
     */
    static final long MAX_SEQUENCE = 1L << 62;
    /** Blocks before the journal: the two copies. */
    static final long COPIES = 2;
    /** Bytes of the label field: bcachefs's {@code BCH_SB_LABEL_SIZE}. */
    static final int LABEL_BYTES = 32;
    /** Where the label's bytes start: right after the bytes the main checksum covers. */
    static final int LABEL_OFFSET = BYTES;
    /** Where the label's CRC32C is kept (0 for an empty label), inside the bytes the main checksum covers. */
    static final int LABEL_CRC_OFFSET = 112;

    /** @throws IllegalArgumentException if the label does not fit its field (callers check it first) */
    BcachefsSuperblock {
        if (label.getBytes(StandardCharsets.UTF_8).length > LABEL_BYTES) {
            throw new IllegalArgumentException("a label of more than " + LABEL_BYTES + " bytes: " + label);
        }
    }

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
        byte[] text = label.getBytes(StandardCharsets.UTF_8);
        buf.put(LABEL_OFFSET, text);
        buf.putInt(LABEL_CRC_OFFSET, labelCrc(buf));
        buf.putInt(8, crc(buf));
        return buf;
    }

    /** @return the CRC32C of the label field's bytes, or 0 if they are all zero (no label) */
    private static int labelCrc(ByteBuffer buf) {
        byte[] field = new byte[LABEL_BYTES];
        buf.get(LABEL_OFFSET, field);
        return Arrays.equals(field, new byte[LABEL_BYTES]) ? 0 : Crc32c.of(field);
    }

    /**
     * Checks a label as {@code FS_IOC_SETFSLABEL} and mkfs give it.
     *
     * @param label the label; empty for none
     * @return its UTF-8 bytes, at most {@link #LABEL_BYTES}
     * @throws InvalidRangeException if it holds a NUL, is not valid text (an unpaired surrogate), or is
     *     longer than {@link #LABEL_BYTES} bytes of UTF-8
     */
    static byte[] labelBytes(String label) throws InvalidRangeException {
        if (label.indexOf('\0') >= 0) {
            throw new InvalidRangeException("bcachefs-like: a label cannot hold a NUL");
        }
        ByteBuffer encoded;
        try {
            encoded = StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).encode(CharBuffer.wrap(label));
        } catch (CharacterCodingException e) {
            throw new InvalidRangeException("bcachefs-like: the label is not valid text (an unpaired surrogate)");
        }
        if (encoded.remaining() > LABEL_BYTES) {
            throw new InvalidRangeException("bcachefs-like: label of " + encoded.remaining()
                    + " bytes of UTF-8 is longer than the superblock's " + LABEL_BYTES + " bytes");
        }
        byte[] bytes = new byte[encoded.remaining()];
        encoded.get(bytes);
        return bytes;
    }

    /**
     * @return the label field's text: its bytes up to the first NUL, which must be UTF-8 and followed by
     *     zeros only
     * @throws CorruptFileSystemException naming the copy if the label's CRC or bytes are wrong
     */
    private static String decodeLabel(ByteBuffer buf, String where) throws CorruptFileSystemException {
        if (buf.capacity() < LABEL_OFFSET + LABEL_BYTES) {
            throw new CorruptFileSystemException(where + ": a block of " + buf.capacity()
                    + " bytes has no room for the label");
        }
        if (buf.getInt(LABEL_CRC_OFFSET) != labelCrc(buf)) {
            throw new CorruptFileSystemException(where + ": the label's checksum does not match its bytes");
        }
        byte[] field = new byte[LABEL_BYTES];
        buf.get(LABEL_OFFSET, field);
        int length = 0;
        while (length < LABEL_BYTES && field[length] != 0) {
            length++;
        }
        for (int i = length; i < LABEL_BYTES; i++) {
            if (field[i] != 0) {
                throw new CorruptFileSystemException(where + ": the label has bytes after its NUL");
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(field, 0, length))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new CorruptFileSystemException(where + ": the label is not UTF-8");
        }
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
                buf.getLong(88), buf.getLong(96), buf.getLong(104), decodeLabel(buf, where));
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
