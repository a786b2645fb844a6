package dev.iomap.adapter.support;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One self-describing, checksummed metadata block, as XFS v5 metadata is: a header saying what the
 * block is and where it belongs, an adapter-defined payload, and a CRC32C.
 *
 * <p>On-device layout (little-endian), one device block:
 * <pre>
 *   offset  size  field
 *        0     4  type magic (identifies the structure; {@link #magic(String)} makes one from 4
 *                 ASCII characters, which are then these 4 bytes in order)
 *        4     4  payload length L, in bytes
 *        8     8  block number the block was written at (catches misdirected writes)
 *       16     8  sequence number / LSN, adapter-defined (the journal uses its transaction sequence)
 *       24     L  payload
 *     24+L     4  CRC32C of bytes [0, 24+L)
 *     28+L     -  zero up to the end of the block (not checked)
 * </pre>
 *
 * <p>Verification ({@link #decode}, {@link #read}) checks, in this order: the type magic (a zeroed or
 * foreign block fails here), the length, the checksum, then the block number. Every failure is a
 * {@link CorruptFileSystemException} naming the block number, its device offset and the expected type.
 *
 * <p>A record: immutable and thread-safe. The payload is a read-only little-endian buffer, position 0.
 * Nothing here flushes the device.
 *
 * @param type the type magic
 * @param blockNo the block this block belongs at
 * @param sequence the sequence number stored in the header
 * @param payload the adapter's bytes
 */
public record MetadataBlock(int type, long blockNo, long sequence, ByteBuffer payload) {
    /** Bytes before the payload. */
    public static final int HEADER_BYTES = 24;
    /** Bytes after the payload: the CRC32C. */
    public static final int TRAILER_BYTES = 4;

    /**
     * Makes the payload a read-only little-endian view from its position.
     *
     * @throws NullPointerException if {@code payload} is null
     */
    public MetadataBlock {
        payload = payload.slice().asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * @param text exactly 4 ASCII characters, e.g. "XAGF"
     * @return a type magic whose on-device bytes are the text (first character in the low byte of the
     *     little-endian int)
     * @throws IllegalArgumentException if {@code text} is not 4 ASCII characters
     */
    public static int magic(String text) {
        return Magic.fromText(text);
    }

    /**
     * @param blockSize the device block size
     * @return the largest payload one block holds
     */
    public static int maxPayload(int blockSize) {
        return blockSize - HEADER_BYTES - TRAILER_BYTES;
    }

    /**
     * @param blockSize the device block size
     * @return this block as {@code blockSize} bytes, position 0
     * @throws InvalidRangeException if the payload does not fit
     */
    public ByteBuffer encode(int blockSize) throws InvalidRangeException {
        if (payload.remaining() > maxPayload(blockSize)) {
            throw new InvalidRangeException(Magic.describe(type) + " block " + blockNo + ": payload of "
                    + payload.remaining() + " bytes does not fit in a " + blockSize
                    + "-byte block (at most " + maxPayload(blockSize) + ")");
        }
        ByteBuffer block = ByteBuffer.allocate(blockSize).order(ByteOrder.LITTLE_ENDIAN);
        block.putInt(type).putInt(payload.remaining()).putLong(blockNo).putLong(sequence);
        block.put(payload.duplicate());
        block.putInt(Crc32c.of(block, 0, block.position()));
        return block.clear();
    }

    /**
     * Verifies a block read from {@code blockNo} and returns it.
     *
     * @param block one device block, between position and limit; not modified
     * @param blockNo where it was read
     * @param expectedType the type magic it must have
     * @return the block
     * @throws CorruptFileSystemException on a wrong type, a bad length or checksum, or a block written
     *     for another block number
     */
    public static MetadataBlock decode(ByteBuffer block, long blockNo, int expectedType)
            throws CorruptFileSystemException {
        int found = block.remaining() < Integer.BYTES
                ? 0
                : block.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(block.position());
        if (found != expectedType) {
            throw new CorruptFileSystemException(where(block, blockNo) + ": expected a "
                    + Magic.describe(expectedType) + " block, found magic " + Magic.describe(found));
        }
        return decodeAnyType(block, blockNo);
    }

    /**
     * Verifies a block read from {@code blockNo} whatever its type (for tools that identify blocks,
     * and for readers that accept several types: switch on {@link #type()}).
     *
     * @param block one device block, between position and limit; not modified
     * @param blockNo where it was read
     * @return the block
     * @throws CorruptFileSystemException on a bad length or checksum, or a block written for another
     *     block number
     */
    public static MetadataBlock decodeAnyType(ByteBuffer block, long blockNo)
            throws CorruptFileSystemException {
        ByteBuffer bytes = block.slice().order(ByteOrder.LITTLE_ENDIAN);
        if (bytes.remaining() < HEADER_BYTES + TRAILER_BYTES) {
            throw new CorruptFileSystemException(where(block, blockNo) + ": truncated to "
                    + bytes.remaining() + " bytes");
        }
        int type = bytes.getInt(0);
        int length = bytes.getInt(4);
        String what = where(block, blockNo) + " (" + Magic.describe(type) + ")";
        if (length < 0 || length > maxPayload(bytes.remaining())) {
            throw new CorruptFileSystemException(what + ": payload length " + length
                    + " does not fit in " + bytes.remaining() + " bytes");
        }
        int stored = bytes.getInt(HEADER_BYTES + length);
        int computed = Crc32c.of(bytes, 0, HEADER_BYTES + length);
        if (stored != computed) {
            throw new CorruptFileSystemException(what + ": bad checksum: stored "
                    + SuperblockCodec.hex(stored) + ", computed " + SuperblockCodec.hex(computed));
        }
        long writtenFor = bytes.getLong(8);
        if (writtenFor != blockNo) {
            throw new CorruptFileSystemException(what + ": holds the block written for block "
                    + writtenFor + " (a misdirected or lost write)");
        }
        return new MetadataBlock(type, blockNo, bytes.getLong(16), bytes.slice(HEADER_BYTES, length));
    }

    /**
     * Encodes and writes a block (purpose {@link IoPurpose#METADATA}), waiting until the device has
     * it. Not durable until the caller flushes.
     *
     * @param device the device
     * @param blockNo where it goes (and what its header says)
     * @param type the type magic
     * @param sequence the sequence number to store
     * @param payload the adapter's bytes; position left unchanged
     * @throws InvalidRangeException if the payload does not fit or the block is outside the device
     * @throws IOException if the device fails
     */
    public static void write(BlockDevice device, long blockNo, int type, long sequence, ByteBuffer payload)
            throws IOException {
        ByteBuffer block = new MetadataBlock(type, blockNo, sequence, payload).encode(device.blockSize());
        BlockIo.write(device, blockNo, block, IoPurpose.METADATA);
    }

    /**
     * {@link #write(BlockDevice, long, int, long, ByteBuffer)} with sequence number 0.
     *
     * @param device the device
     * @param blockNo where it goes
     * @param type the type magic
     * @param payload the adapter's bytes
     * @throws IOException as the full form
     */
    public static void write(BlockDevice device, long blockNo, int type, ByteBuffer payload)
            throws IOException {
        write(device, blockNo, type, 0, payload);
    }

    /**
     * Reads and verifies the block at {@code blockNo}.
     *
     * @param device the device
     * @param blockNo the block
     * @param expectedType the type magic it must have
     * @return the block
     * @throws CorruptFileSystemException as {@link #decode} does
     * @throws IOException if the device fails or the block is outside it
     */
    public static MetadataBlock read(BlockDevice device, long blockNo, int expectedType) throws IOException {
        return decode(BlockIo.read(device, blockNo, 1), blockNo, expectedType);
    }

    /** @return a reader over the payload, whose messages name this block */
    public BlockReader reader() {
        return new BlockReader(payload, Magic.describe(type) + " block " + blockNo + " payload");
    }

    @Override
    public String toString() {
        return "MetadataBlock[" + Magic.describe(type) + ", block " + blockNo + ", sequence " + sequence
                + ", " + payload.remaining() + " payload bytes]";
    }

    /** @return "metadata block N (device offset X)", the offset only if the buffer is a whole block */
    private static String where(ByteBuffer block, long blockNo) {
        int blockSize = block.remaining();
        boolean wholeBlock = blockSize >= 512 && Integer.bitCount(blockSize) == 1;
        String offset = wholeBlock && blockNo >= 0 && blockNo <= Long.MAX_VALUE / blockSize
                ? " (device offset " + blockNo * blockSize + ")"
                : "";
        return "metadata block " + blockNo + offset;
    }
}
