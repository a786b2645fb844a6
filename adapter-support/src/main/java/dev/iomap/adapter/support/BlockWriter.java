package dev.iomap.adapter.support;

import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Appends little-endian fields to a fixed-size region of a buffer: how adapters lay out the payload
 * of a superblock or metadata block. Every put checks that the field fits before writing any of it.
 *
 * <p>Encodings: {@code putByte} 1 byte, {@code putInt} 4, {@code putLong} 8, {@code putBytes} the raw
 * bytes (no length), {@code putByteString} an int byte count then those bytes as they are (a file
 * name: see {@link dev.iomap.api.FileNames}), {@code putString} an int byte count then that many UTF-8
 * bytes (text such as a label).
 *
 * <p>Not thread-safe: one writer per thread. The target buffer's own position and limit are never
 * changed; the writer keeps its own position, starting at the buffer's position when wrapped.
 */
public final class BlockWriter {
    private final ByteBuffer target;
    private final int start;
    private final String what;

    /**
     * Writes into {@code target} from its position up to its limit.
     *
     * @param target where the fields go
     * @param what the structure being written, for error messages (e.g. "xfs-like superblock payload")
     */
    public BlockWriter(ByteBuffer target, String what) {
        this.target = target.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        this.start = target.position();
        this.what = what;
    }

    /**
     * @param capacity bytes available, at least 0
     * @param what the structure being written, for error messages
     * @return a writer over a new zero-filled heap buffer of {@code capacity} bytes
     */
    public static BlockWriter allocate(int capacity, String what) {
        return new BlockWriter(ByteBuffer.allocate(capacity), what);
    }

    /**
     * @param value written as one byte (the low 8 bits)
     * @return this writer
     * @throws InvalidRangeException if no byte is left
     */
    public BlockWriter putByte(int value) throws InvalidRangeException {
        ensure(1, "byte");
        target.put((byte) value);
        return this;
    }

    /**
     * @param value written as 4 little-endian bytes
     * @return this writer
     * @throws InvalidRangeException if fewer than 4 bytes are left
     */
    public BlockWriter putInt(int value) throws InvalidRangeException {
        ensure(Integer.BYTES, "int");
        target.putInt(value);
        return this;
    }

    /**
     * @param value written as 8 little-endian bytes
     * @return this writer
     * @throws InvalidRangeException if fewer than 8 bytes are left
     */
    public BlockWriter putLong(long value) throws InvalidRangeException {
        ensure(Long.BYTES, "long");
        target.putLong(value);
        return this;
    }

    /**
     * @param bytes written as they are, without a length
     * @return this writer
     * @throws InvalidRangeException if they do not fit
     */
    public BlockWriter putBytes(byte[] bytes) throws InvalidRangeException {
        ensure(bytes.length, bytes.length + " bytes");
        target.put(bytes);
        return this;
    }

    /**
     * @param bytes the bytes between its position and limit, written as they are without a length;
     *     its position is left where it was
     * @return this writer
     * @throws InvalidRangeException if they do not fit
     */
    public BlockWriter putBytes(ByteBuffer bytes) throws InvalidRangeException {
        ensure(bytes.remaining(), bytes.remaining() + " bytes");
        target.put(bytes.duplicate());
        return this;
    }

    /**
     * Writes a byte string, such as a file name's {@link dev.iomap.api.FileNames#encode} bytes, exactly:
     * unlike {@link #putString} nothing is decoded or replaced.
     *
     * @param bytes written as an int byte count followed by the bytes as they are
     * @return this writer
     * @throws InvalidRangeException if it does not fit (nothing is written then)
     */
    public BlockWriter putByteString(byte[] bytes) throws InvalidRangeException {
        ensure(Integer.BYTES + bytes.length, "byte string of " + bytes.length + " bytes");
        target.putInt(bytes.length);
        target.put(bytes);
        return this;
    }

    /**
     * Text only: a lone surrogate becomes {@code '?'}; a file name goes through
     * {@link #putByteString} instead.
     *
     * @param value written as an int byte count followed by its UTF-8 bytes
     * @return this writer
     * @throws InvalidRangeException if it does not fit (nothing is written then)
     */
    public BlockWriter putString(String value) throws InvalidRangeException {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        ensure(Integer.BYTES + utf8.length, "string of " + utf8.length + " UTF-8 bytes");
        target.putInt(utf8.length);
        target.put(utf8);
        return this;
    }

    /** @return bytes written so far */
    public int position() {
        return target.position() - start;
    }

    /** @return bytes still free */
    public int remaining() {
        return target.remaining();
    }

    /**
     * @return a read-only view of the bytes written so far (from the start position to the current
     *     one), position 0, little-endian; it shares the target's memory
     */
    public ByteBuffer written() {
        return target.asReadOnlyBuffer().flip().position(start).slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** @return a copy of the bytes written so far */
    public byte[] toByteArray() {
        ByteBuffer written = written();
        byte[] copy = new byte[written.remaining()];
        written.get(copy);
        return copy;
    }

    private void ensure(int bytes, String field) throws InvalidRangeException {
        if (bytes > target.remaining()) {
            throw new InvalidRangeException(what + ": " + field + " at offset " + position()
                    + " does not fit: " + target.remaining() + " bytes left");
        }
    }
}
