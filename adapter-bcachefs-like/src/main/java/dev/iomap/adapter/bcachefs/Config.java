package dev.iomap.adapter.bcachefs;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.Set;

/**
 * The filesystem's format options, chosen at format time and kept in the config key
 * ({@link Keys#CONFIG}): checksum and compression of new extents, the extent size cap, whether data is
 * overwritten in place ({@code nocow}), and the journal size asked of the store.
 *
 * @param checksum checksum type of new extents (one of {@link Codecs}' {@code CSUM_*})
 * @param compression compression of new extents (one of {@link Codecs}' {@code COMPRESS_*})
 * @param extentMaxBytes largest extent in bytes, a multiple of the block size
 * @param nocow whether allocated blocks are overwritten in place, without checksums
 * @param journalBlocks journal blocks of the store (0: the store's default)
 */
record Config(int checksum, int compression, int extentMaxBytes, boolean nocow, long journalBlocks) {
    /** Format properties this adapter knows. */
    static final Set<String> PROPERTIES = Set.of("checksum", "compression", "extentmax", "nocow", "journalblocks");
    /** Encoded size of the config value. */
    static final int BYTES = 24;
    private static final int VERSION = 1;

    /**
     * Reads the format properties.
     *
     * @param options the format options
     * @return the config
     * @throws InvalidRangeException for an unknown property or a bad value
     */
    static Config parse(FormatOptions options) throws InvalidRangeException {
        Map<String, String> p = options.properties();
        for (String key : p.keySet()) {
            if (!PROPERTIES.contains(key)) {
                throw new InvalidRangeException("bcachefs-like format property '" + key + "' is unknown; known: "
                        + PROPERTIES);
            }
        }
        int checksum = switch (p.getOrDefault("checksum", "crc32c")) {
            case "crc32c" -> Codecs.CSUM_CRC32C;
            case "xxhash64" -> Codecs.CSUM_XXHASH64;
            case "none" -> Codecs.CSUM_NONE;
            default -> throw new InvalidRangeException("bcachefs-like checksum=" + p.get("checksum")
                    + ": use crc32c, xxhash64 or none");
        };
        int compression = switch (p.getOrDefault("compression", "none")) {
            case "none" -> Codecs.COMPRESS_NONE;
            case "lz4" -> Codecs.COMPRESS_LZ4;
            case "zstd" -> Codecs.COMPRESS_ZSTD;
            default -> throw new InvalidRangeException("bcachefs-like compression=" + p.get("compression")
                    + ": use none, lz4 or zstd");
        };
        boolean nocow = switch (p.getOrDefault("nocow", "false")) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new InvalidRangeException("bcachefs-like nocow=" + p.get("nocow") + ": use true or false");
        };
        long extentMax = number(p, "extentmax", 65536, options.blockSize(), 1 << 20);
        if (extentMax % options.blockSize() != 0) {
            throw new InvalidRangeException("bcachefs-like extentmax=" + extentMax + " is not a multiple of the block size "
                    + options.blockSize());
        }
        if (nocow && compression != Codecs.COMPRESS_NONE) {
            throw new InvalidRangeException("bcachefs-like nocow=true cannot compress (data is overwritten in place)");
        }
        long journal = number(p, "journalblocks", 0, 0, 1 << 20);
        return new Config(nocow ? Codecs.CSUM_NONE : checksum, compression, (int) extentMax, nocow, journal);
    }

    private static long number(Map<String, String> p, String key, long fallback, long min, long max)
            throws InvalidRangeException {
        String text = p.get(key);
        if (text == null) {
            return fallback;
        }
        long value;
        try {
            value = Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new InvalidRangeException("bcachefs-like " + key + "=" + text + " is not a number");
        }
        if (value < min || value > max) {
            throw new InvalidRangeException("bcachefs-like " + key + "=" + value + " is outside " + min + ".." + max);
        }
        return value;
    }

    /** @return the value of the config key */
    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(VERSION).putInt(checksum).putInt(compression).putInt(extentMaxBytes).put((byte) (nocow ? 1 : 0));
        b.put(new byte[3]).putInt((int) journalBlocks);
        return b.array();
    }

    /**
     * @param value the config key's value
     * @return the config
     * @throws CorruptFileSystemException if the value is not a valid config
     */
    static Config decode(byte[] value) throws CorruptFileSystemException {
        if (value.length != BYTES) {
            throw new CorruptFileSystemException("bcachefs-like config key has " + value.length + " bytes, not " + BYTES);
        }
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        int version = b.getInt();
        int checksum = b.getInt();
        int compression = b.getInt();
        int extentMax = b.getInt();
        byte nocow = b.get();
        b.position(b.position() + 3);
        long journal = Integer.toUnsignedLong(b.getInt());
        if (version != VERSION || checksum < 0 || checksum > Codecs.CSUM_XXHASH64 || compression < 0
                || compression > Codecs.COMPRESS_ZSTD || extentMax < 512 || (nocow & ~1) != 0) {
            throw new CorruptFileSystemException("bcachefs-like config key is invalid (version " + version + ", checksum "
                    + checksum + ", compression " + compression + ", extentmax " + extentMax + ")");
        }
        return new Config(checksum, compression, extentMax, nocow == 1, journal);
    }
}
