package dev.iomap.adapter.bcachefs;

import com.github.luben.zstd.Zstd;
import dev.iomap.adapter.support.Crc32c;
import java.io.IOException;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHashFactory;

/**
 * Checksums and compression of data extents. Checksums cover the bytes as they are on the device
 * (compressed, if the extent is). lz4 comes from lz4-java (the maintained fork), zstd from zstd-jni,
 * the JNI binding of the reference library bcachefs's zstd option uses; both are block formats with no
 * framing of their own, the uncompressed size is in the extent key.
 */
final class Codecs {
    /** No checksum. */
    static final int CSUM_NONE = 0;
    /** CRC-32C (Castagnoli), the JDK's. */
    static final int CSUM_CRC32C = 1;
    /** xxHash64, seed 0. */
    static final int CSUM_XXHASH64 = 2;
    /** Not compressed. */
    static final int COMPRESS_NONE = 0;
    /** lz4 block format. */
    static final int COMPRESS_LZ4 = 1;
    /** zstd frame (level 3). */
    static final int COMPRESS_ZSTD = 2;

    private static final LZ4Factory LZ4 = LZ4Factory.safeInstance();
    private static final XXHashFactory XXHASH = XXHashFactory.safeInstance();

    private Codecs() {
    }

    /**
     * @param type a checksum type
     * @param bytes the data
     * @param length bytes of {@code bytes} covered, from 0
     * @return the checksum (0 for {@link #CSUM_NONE})
     */
    static long checksum(int type, byte[] bytes, int length) {
        return switch (type) {
            case CSUM_CRC32C -> Integer.toUnsignedLong(Crc32c.of(bytes, 0, length));
            case CSUM_XXHASH64 -> XXHASH.hash64().hash(bytes, 0, length, 0);
            default -> 0;
        };
    }

    /** @return the name of a checksum type, for messages */
    static String checksumName(int type) {
        return switch (type) {
            case CSUM_CRC32C -> "crc32c";
            case CSUM_XXHASH64 -> "xxhash64";
            default -> "none";
        };
    }

    /**
     * Compresses.
     *
     * @param type {@link #COMPRESS_LZ4} or {@link #COMPRESS_ZSTD}
     * @param data the uncompressed bytes
     * @return the compressed bytes (may be longer than {@code data}; the caller then stores it uncompressed)
     */
    static byte[] compress(int type, byte[] data) {
        return switch (type) {
            case COMPRESS_LZ4 -> LZ4.fastCompressor().compress(data);
            case COMPRESS_ZSTD -> Zstd.compress(data, 3);
            default -> throw new IllegalArgumentException("compression type " + type);
        };
    }

    /**
     * Decompresses.
     *
     * @param type the compression type
     * @param data compressed bytes, exactly {@code length} of them from 0 are used
     * @param length compressed length
     * @param uncompressed the uncompressed length
     * @return the uncompressed bytes
     * @throws IOException if the data does not decompress to exactly {@code uncompressed} bytes
     */
    static byte[] decompress(int type, byte[] data, int length, int uncompressed) throws IOException {
        byte[] out = new byte[uncompressed];
        try {
            int produced = switch (type) {
                case COMPRESS_LZ4 -> LZ4.safeDecompressor().decompress(data, 0, length, out, 0, uncompressed);
                case COMPRESS_ZSTD -> (int) Zstd.decompressByteArray(out, 0, uncompressed, data, 0, length);
                default -> throw new IOException("unknown compression type " + type);
            };
            if (produced != uncompressed) {
                throw new IOException("extent decompressed to " + produced + " bytes, not " + uncompressed);
            }
            return out;
        } catch (RuntimeException e) {
            throw new IOException("extent does not decompress: " + e.getMessage(), e);
        }
    }
}
