package dev.iomap.adapter.support;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Optional;

/**
 * Encodes and decodes an adapter's superblock: an adapter-defined payload framed by a magic, a format
 * version, a length and a CRC32C, in one device block.
 *
 * <p>On-device layout (little-endian), at the start of the block:
 * <pre>
 *   offset  size  field
 *        0     8  magic, chosen by the adapter (identifies the format)
 *        8     4  format version
 *       12     4  payload length L, in bytes
 *       16     L  payload
 *     16+L     4  CRC32C of bytes [0, 16+L)
 *     20+L     -  zero up to the end of the block (not checked)
 * </pre>
 *
 * <p>{@link #decode} checks, in this order, and refuses with {@link CorruptFileSystemException} naming
 * the adapter and the device offset: a block too short for the header; a foreign magic ("not a NAME
 * image: magic ..."); a length that runs past the block; the checksum; a version outside
 * {@code [oldestVersion, version]} (naming both the image's and the supported versions). The framing
 * never changes between versions, so an image of a newer version is recognised as such.
 *
 * <p>Immutable and thread-safe. Nothing here flushes: after {@link #write}, call
 * {@link BlockDevice#flush()} to make the superblock durable.
 */
public final class SuperblockCodec {
    /** Bytes before the payload: magic, version, length. */
    public static final int HEADER_BYTES = 16;
    /** Bytes after the payload: the CRC32C. */
    public static final int TRAILER_BYTES = 4;
    /** Payload bytes that {@link #probePayload} returns at least, through a 512-byte block. */
    public static final int PROBE_PAYLOAD_BYTES = 512 - HEADER_BYTES;

    private final String name;
    private final byte[] magic;
    private final int oldestVersion;
    private final int version;

    /**
     * A codec that writes and reads exactly one format version.
     *
     * @param name the format's name for messages, e.g. "xfs-like"
     * @param magic exactly 8 ASCII characters, e.g. "IOMAPXFS"
     * @param version the version written and the only one read
     * @throws IllegalArgumentException if the magic is not 8 ASCII characters
     */
    public SuperblockCodec(String name, String magic, int version) {
        this(name, Magic.ascii(magic, 8), version, version);
    }

    /**
     * A codec that writes {@code version} and reads every version from {@code oldestVersion} on.
     *
     * @param name the format's name for messages
     * @param magic exactly 8 bytes; copied
     * @param oldestVersion the oldest version {@link #decode} accepts
     * @param version the version written, and the newest accepted
     * @throws IllegalArgumentException if the magic is not 8 bytes or {@code oldestVersion > version}
     */
    public SuperblockCodec(String name, byte[] magic, int oldestVersion, int version) {
        if (magic.length != 8) {
            throw new IllegalArgumentException("a superblock magic is 8 bytes, got " + magic.length);
        }
        if (oldestVersion > version) {
            throw new IllegalArgumentException(
                    "oldest version " + oldestVersion + " is newer than version " + version);
        }
        this.name = name;
        this.magic = magic.clone();
        this.oldestVersion = oldestVersion;
        this.version = version;
    }

    /**
     * A decoded superblock.
     *
     * @param version the image's format version, in {@code [oldestVersion, version]}
     * @param payload the adapter's bytes: a read-only little-endian buffer, position 0
     */
    public record Decoded(int version, ByteBuffer payload) {
    }

    /**
     * @param blockSize the device block size
     * @return the largest payload that fits in one block
     */
    public static int maxPayload(int blockSize) {
        return blockSize - HEADER_BYTES - TRAILER_BYTES;
    }

    /**
     * @param payload the adapter's bytes, between position and limit; position left unchanged
     * @param blockSize the block size of the device it will go to
     * @return a new block of {@code blockSize} bytes, position 0, holding the framed payload at the
     *     current version
     * @throws InvalidRangeException if the payload does not fit in one block
     */
    public ByteBuffer encode(ByteBuffer payload, int blockSize) throws InvalidRangeException {
        if (payload.remaining() > maxPayload(blockSize)) {
            throw new InvalidRangeException(name + " superblock payload of " + payload.remaining()
                    + " bytes does not fit in a " + blockSize + "-byte block (at most "
                    + maxPayload(blockSize) + ")");
        }
        ByteBuffer block = ByteBuffer.allocate(blockSize).order(ByteOrder.LITTLE_ENDIAN);
        block.put(magic).putInt(version).putInt(payload.remaining()).put(payload.duplicate());
        int crc = Crc32c.of(block, 0, block.position());
        block.putInt(crc);
        return block.clear();
    }

    /**
     * Verifies and unframes a superblock.
     *
     * @param block the bytes read from the device, between position and limit; not modified
     * @param deviceOffset where they were read, for messages
     * @return the version and payload
     * @throws CorruptFileSystemException if the block is too short, foreign, has a bad length or
     *     checksum, or an unsupported version (see the class comment)
     */
    public Decoded decode(ByteBuffer block, long deviceOffset) throws CorruptFileSystemException {
        ByteBuffer bytes = block.slice().order(ByteOrder.LITTLE_ENDIAN);
        String where = " at device offset " + deviceOffset;
        if (bytes.remaining() < HEADER_BYTES + TRAILER_BYTES) {
            throw new CorruptFileSystemException(name + " superblock" + where + " is truncated: "
                    + bytes.remaining() + " bytes, the header and checksum alone take "
                    + (HEADER_BYTES + TRAILER_BYTES));
        }
        byte[] found = new byte[magic.length];
        bytes.get(0, found);
        if (!Arrays.equals(found, magic)) {
            throw new CorruptFileSystemException("not a " + name + " image: magic "
                    + Magic.describe(found) + where + ", expected " + Magic.describe(magic));
        }
        int imageVersion = bytes.getInt(8);
        int length = bytes.getInt(12);
        if (length < 0 || length > bytes.remaining() - HEADER_BYTES - TRAILER_BYTES) {
            throw new CorruptFileSystemException(name + " superblock" + where
                    + " is truncated or damaged: payload length " + length + " does not fit in "
                    + bytes.remaining() + " bytes");
        }
        int stored = bytes.getInt(HEADER_BYTES + length);
        int computed = Crc32c.of(bytes, 0, HEADER_BYTES + length);
        if (stored != computed) {
            throw new CorruptFileSystemException(name + " superblock" + where
                    + " has a bad checksum: stored " + hex(stored) + ", computed " + hex(computed));
        }
        if (imageVersion < oldestVersion || imageVersion > version) {
            throw new CorruptFileSystemException(name + " superblock" + where + " has format version "
                    + imageVersion + "; this build supports " + supportedVersions());
        }
        ByteBuffer payload = bytes.slice(HEADER_BYTES, length).asReadOnlyBuffer()
                .order(ByteOrder.LITTLE_ENDIAN);
        return new Decoded(imageVersion, payload);
    }

    /**
     * @param block bytes read from a device, between position and limit
     * @return whether they start with this codec's magic: for probing which adapter owns an image
     */
    public boolean hasMagic(ByteBuffer block) {
        if (block.remaining() < magic.length) {
            return false;
        }
        byte[] found = new byte[magic.length];
        block.get(block.position(), found);
        return Arrays.equals(found, magic);
    }

    /**
     * Encodes the payload and writes it to one block (purpose {@link IoPurpose#METADATA}), waiting
     * until the device has it. Not durable until the caller flushes.
     *
     * @param device the device
     * @param blockNo the superblock's block
     * @param payload the adapter's bytes; position left unchanged
     * @throws InvalidRangeException if the payload does not fit or the block is outside the device
     * @throws IOException if the device fails
     */
    public void write(BlockDevice device, long blockNo, ByteBuffer payload) throws IOException {
        BlockIo.write(device, blockNo, encode(payload, device.blockSize()), IoPurpose.METADATA);
    }

    /**
     * Reads and decodes the superblock at {@code blockNo}.
     *
     * @param device the device
     * @param blockNo the superblock's block
     * @return the version and payload
     * @throws CorruptFileSystemException as {@link #decode} does
     * @throws IOException if the device fails or the block is outside it
     */
    public Decoded read(BlockDevice device, long blockNo) throws IOException {
        return decode(BlockIo.read(device, blockNo, 1), blockNo * device.blockSize());
    }

    /**
     * Whether block {@code blockNo} starts with this codec's magic, checksum or not: what
     * {@code FileSystemAdapter.probe} asks. Reads one block; a device too small to hold it has none.
     *
     * @param device the device
     * @param blockNo the superblock's block
     * @return true if the magic is there
     * @throws IOException if the device fails
     */
    public boolean probe(BlockDevice device, long blockNo) throws IOException {
        if ((blockNo + 1) * device.blockSize() > device.capacity()) {
            return false;
        }
        return hasMagic(BlockIo.read(device, blockNo, 1));
    }

    /**
     * The start of the payload at block {@code blockNo} if the block starts with this codec's magic:
     * for {@code FileSystemAdapter.probeFormat}, which reads a field at a fixed place (such as the
     * block size) without trusting it. Neither the length nor the checksum is checked. Reads one
     * block; a device too small to hold it has none.
     *
     * @param device the device, of any block size; 512 bytes hold the header and a payload's first
     *     {@value #PROBE_PAYLOAD_BYTES} bytes
     * @param blockNo the superblock's block
     * @return the bytes after the header to the end of the block read (read-only, little-endian,
     *     position 0), or empty if the magic is not there
     * @throws IOException if the device fails
     */
    public Optional<ByteBuffer> probePayload(BlockDevice device, long blockNo) throws IOException {
        if ((blockNo + 1) * device.blockSize() > device.capacity()) {
            return Optional.empty();
        }
        ByteBuffer block = BlockIo.read(device, blockNo, 1);
        if (!hasMagic(block)) {
            return Optional.empty();
        }
        ByteBuffer bytes = block.slice().order(ByteOrder.LITTLE_ENDIAN);
        return Optional.of(bytes.slice(HEADER_BYTES, bytes.remaining() - HEADER_BYTES).asReadOnlyBuffer()
                .order(ByteOrder.LITTLE_ENDIAN));
    }

    /** @return the format's name */
    public String name() {
        return name;
    }

    /** @return the version this codec writes */
    public int version() {
        return version;
    }

    private String supportedVersions() {
        return oldestVersion == version
                ? "version " + version
                : "versions " + oldestVersion + " to " + version;
    }

    static String hex(int value) {
        return String.format("0x%08x", value);
    }
}
