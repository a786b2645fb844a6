package dev.iomap.adapter.support;

import dev.iomap.api.CorruptFileSystemException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads the little-endian fields {@link BlockWriter} wrote, from bytes that came off a device and are
 * therefore untrusted: a field that runs past the end, a negative or oversized string length or bad
 * UTF-8 is a {@link CorruptFileSystemException} naming the structure and the payload offset, never an
 * unchecked exception.
 *
 * <p>Not thread-safe: one reader per thread. The source buffer's own position and limit are never
 * changed; the reader keeps its own position, starting at the source's position.
 */
public final class BlockReader {
    private final ByteBuffer source;
    private final int start;
    private final String what;

    /**
     * Reads {@code source} from its position up to its limit.
     *
     * @param source the bytes
     * @param what the structure and where it is, for error messages (e.g. "xfs-like superblock
     *     payload at block 0 (device offset 0)")
     */
    public BlockReader(ByteBuffer source, String what) {
        this.source = source.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        this.start = source.position();
        this.what = what;
    }

    /**
     * @return the next byte, 0..255
     * @throws CorruptFileSystemException if none is left
     */
    public int getByte() throws CorruptFileSystemException {
        ensure(1, "byte");
        return source.get() & 0xFF;
    }

    /**
     * @return the next 4 bytes as a little-endian int
     * @throws CorruptFileSystemException if fewer are left
     */
    public int getInt() throws CorruptFileSystemException {
        ensure(Integer.BYTES, "int");
        return source.getInt();
    }

    /**
     * @return the next 8 bytes as a little-endian long
     * @throws CorruptFileSystemException if fewer are left
     */
    public long getLong() throws CorruptFileSystemException {
        ensure(Long.BYTES, "long");
        return source.getLong();
    }

    /**
     * @param length how many bytes, at least 0
     * @return a copy of the next {@code length} bytes
     * @throws CorruptFileSystemException if fewer are left or {@code length} is negative
     */
    public byte[] getBytes(int length) throws CorruptFileSystemException {
        if (length < 0) {
            throw corrupt("negative byte count " + length);
        }
        ensure(length, length + " bytes");
        byte[] bytes = new byte[length];
        source.get(bytes);
        return bytes;
    }

    /**
     * Reads what {@link BlockWriter#putByteString} wrote: the bytes exactly, whatever they are (turn a
     * file name's into its {@code String} with {@link dev.iomap.api.FileNames#decode}).
     *
     * @return a copy of the next byte string: an int byte count, then that many bytes
     * @throws CorruptFileSystemException if the count is negative or runs past the end
     */
    public byte[] getByteString() throws CorruptFileSystemException {
        int at = position();
        int length = getInt();
        if (length < 0 || length > source.remaining()) {
            throw new CorruptFileSystemException(what + ": byte string at offset " + at + " claims "
                    + length + " bytes but " + source.remaining() + " remain");
        }
        byte[] bytes = new byte[length];
        source.get(bytes);
        return bytes;
    }

    /**
     * @return the next string: an int byte count, then that many UTF-8 bytes
     * @throws CorruptFileSystemException if the count is negative or runs past the end, or the bytes
     *     are not UTF-8
     */
    public String getString() throws CorruptFileSystemException {
        int at = position();
        int length = getInt();
        if (length < 0 || length > source.remaining()) {
            throw new CorruptFileSystemException(what + ": string at offset " + at + " claims "
                    + length + " bytes but " + source.remaining() + " remain");
        }
        ByteBuffer utf8 = source.slice(source.position(), length);
        try {
            String value = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(utf8)
                    .toString();
            source.position(source.position() + length);
            return value;
        } catch (CharacterCodingException e) {
            throw new CorruptFileSystemException(what + ": string at offset " + at + " is not UTF-8");
        }
    }

    /**
     * @param length how many bytes to pass over, at least 0
     * @throws CorruptFileSystemException if fewer are left or {@code length} is negative
     */
    public void skip(int length) throws CorruptFileSystemException {
        if (length < 0) {
            throw corrupt("negative skip " + length);
        }
        ensure(length, length + " bytes");
        source.position(source.position() + length);
    }

    /** @return bytes read so far */
    public int position() {
        return source.position() - start;
    }

    /** @return bytes left */
    public int remaining() {
        return source.remaining();
    }

    /**
     * An error about a value this reader just read, for decoders that check their fields.
     *
     * @param detail what is wrong, e.g. "extent count -3 is negative"
     * @return an exception (not thrown) whose message names the structure and the current offset
     */
    public CorruptFileSystemException corrupt(String detail) {
        return new CorruptFileSystemException(what + ": " + detail + " (before offset " + position() + ")");
    }

    private void ensure(int bytes, String field) throws CorruptFileSystemException {
        if (bytes > source.remaining()) {
            throw new CorruptFileSystemException(what + ": truncated: " + field + " at offset "
                    + position() + " runs past the end (" + source.remaining() + " bytes left)");
        }
    }
}
