package dev.iomap.api;

import java.util.Map;

/**
 * How to format a device.
 *
 * @param blockSize the filesystem block size: a power of two from 512 to 65536, at least the device's
 * @param label a name stored in the superblock (at most 32 bytes of UTF-8)
 * @param properties adapter-specific settings (e.g. {@code "agcount" -> "4"}); unknown keys are an error
 */
public record FormatOptions(int blockSize, String label, Map<String, String> properties) {
    /** The longest label, in bytes of UTF-8. */
    public static final int MAX_LABEL_BYTES = 32;

    /** Validates and copies. */
    public FormatOptions {
        if (Integer.bitCount(blockSize) != 1 || blockSize < 512 || blockSize > 65536) {
            throw new IllegalArgumentException("blockSize must be a power of two from 512 to 65536, got " + blockSize);
        }
        label = label == null ? "" : label;
        if (label.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_LABEL_BYTES) {
            throw new IllegalArgumentException("the label '" + label + "' is longer than " + MAX_LABEL_BYTES
                    + " bytes of UTF-8");
        }
        properties = properties == null ? Map.of() : Map.copyOf(properties);
    }

    /**
     * @param blockSize the block size
     * @return options with that block size, no label and no properties
     */
    public static FormatOptions blockSize(int blockSize) {
        return new FormatOptions(blockSize, "", Map.of());
    }
}
