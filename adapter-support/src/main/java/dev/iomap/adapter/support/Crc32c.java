package dev.iomap.adapter.support;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC32C (Castagnoli, the checksum of XFS v5, ext4, btrfs and bcachefs metadata) of byte ranges, as
 * an {@code int}. The value is the standard one: {@code Crc32c.of("123456789")} is
 * {@code 0xE3069283}. Stored on the device as 4 little-endian bytes.
 *
 * <p>Stateless and thread-safe. Buffers are never modified, nor their positions moved.
 */
public final class Crc32c {
    private Crc32c() {
    }

    /**
     * @param bytes the data
     * @return the CRC32C of all of {@code bytes}
     */
    public static int of(byte[] bytes) {
        return of(bytes, 0, bytes.length);
    }

    /**
     * @param bytes the data
     * @param offset first byte
     * @param length bytes to cover
     * @return the CRC32C of {@code bytes[offset, offset + length)}
     * @throws IndexOutOfBoundsException if the range is not inside {@code bytes}
     */
    public static int of(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }

    /**
     * @param buffer the data; its position is left where it was
     * @return the CRC32C of the bytes between {@code buffer}'s position and limit
     */
    public static int of(ByteBuffer buffer) {
        CRC32C crc = new CRC32C();
        crc.update(buffer.duplicate());
        return (int) crc.getValue();
    }

    /**
     * @param buffer the data; its position and limit are ignored and left alone
     * @param offset absolute index of the first byte
     * @param length bytes to cover
     * @return the CRC32C of {@code buffer[offset, offset + length)}
     * @throws IndexOutOfBoundsException if the range is not inside {@code buffer}'s capacity
     */
    public static int of(ByteBuffer buffer, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(buffer.slice(offset, length));
        return (int) crc.getValue();
    }

    /**
     * Continues a running checksum: for incremental checksums over several buffers.
     *
     * @param crc the running checksum; its state advances
     * @param buffer the next bytes, between position and limit; the position is left where it was
     */
    public static void update(CRC32C crc, ByteBuffer buffer) {
        crc.update(buffer.duplicate());
    }
}
