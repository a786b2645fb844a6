package dev.iomap.it.fuzz;

import dev.iomap.adapter.support.Crc32c;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.SuperblockCodec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * How a structure's checksum is computed, so that a forged field can be sealed again: after
 * {@link #seal} only structural verification can tell the structure was changed. Sealing a
 * structure whose (possibly forged) length field puts the checksum outside it leaves it unsealed.
 */
@FunctionalInterface
interface Framing {

    /**
     * Recomputes the checksum of {@code bytes}, one whole structure, in place.
     *
     * @param bytes the structure
     */
    void seal(byte[] bytes);

    /** No checksum (the journal's log blocks are checked by their commit block, not alone). */
    Framing NONE = bytes -> {
    };

    /** adapter-support's {@link MetadataBlock}: CRC32C of {@code [0, 24 + L)} at {@code 24 + L}, L at 4. */
    Framing METADATA_BLOCK = bytes -> sealAfterLength(bytes, 4, MetadataBlock.HEADER_BYTES);

    /** adapter-support's {@link SuperblockCodec}: CRC32C of {@code [0, 16 + L)} at {@code 16 + L}, L at 12. */
    Framing SUPERBLOCK_CODEC = bytes -> sealAfterLength(bytes, 12, SuperblockCodec.HEADER_BYTES);

    /**
     * @param covered the checksummed bytes {@code [0, covered)}; the checksum follows them
     * @param order the byte order the checksum is stored in
     * @return a fixed-size frame (the zoned device's geometry block, snapfs' superblock)
     */
    static Framing crcAfter(int covered, ByteOrder order) {
        return bytes -> ByteBuffer.wrap(bytes).order(order).putInt(covered, Crc32c.of(bytes, 0, covered));
    }

    /**
     * The zoned device's zone-state slot: the zone count N (u32) at 16, then N 16-byte entries after a
     * 24-byte header, then the CRC32C of everything before it.
     */
    Framing ZONE_STATE_SLOT = bytes -> {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long covered = 24 + 16L * buffer.getInt(16);
        if (covered >= 24 && covered + 4 <= bytes.length) {
            buffer.putInt((int) covered, Crc32c.of(bytes, 0, (int) covered));
        }
    };

    /**
     * snapfs' metadata slot (big-endian): payload length L at 16, CRC32C of bytes {@code [8, 20)} and of
     * the payload {@code [24, 24 + L)} stored at 20.
     */
    Framing SNAPFS_SLOT = bytes -> {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        long length = buffer.getInt(16);
        if (length < 0 || 24 + length > bytes.length) {
            return;
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 8, 12);
        crc.update(bytes, 24, (int) length);
        buffer.putInt(20, (int) crc.getValue());
    };

    private static void sealAfterLength(byte[] bytes, int lengthAt, int header) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long covered = header + (long) buffer.getInt(lengthAt);
        if (covered >= header && covered + 4 <= bytes.length) {
            buffer.putInt((int) covered, Crc32c.of(bytes, 0, (int) covered));
        }
    }
}
