package dev.iomap.testkit;

import java.nio.ByteBuffer;

/**
 * Test data that says where it belongs: byte {@code i} of a pattern depends on its seed and on the
 * file offset it was written at, so data landing at the wrong offset, from the wrong write or from a
 * stale block is caught. Pattern bytes are never 0 (so they differ from holes), never
 * {@link #STALE_MARKER} and never {@link dev.iomap.api.PageCacheOptions#POISON_BYTE}.
 */
public final class TestData {
    /** The byte tests fill deleted files with, so that stale data exposure is recognised. */
    public static final byte STALE_MARKER = (byte) 0xD5;

    private TestData() {
    }

    /**
     * @param seed identifies the write
     * @param fileOffset the file offset of the first byte
     * @param length bytes
     * @return the pattern
     */
    public static byte[] pattern(long seed, long fileOffset, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = at(seed, fileOffset + i);
        }
        return bytes;
    }

    /**
     * @param seed identifies the write
     * @param fileOffset a file offset
     * @return the pattern byte at that offset
     */
    public static byte at(long seed, long fileOffset) {
        long h = (fileOffset + 1) * 0x9E3779B97F4A7C15L ^ seed * 0xC2B2AE3D27D4EB4FL;
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 29;
        int value = (int) ((h & 0x7fffffffL) % 253) + 1; // 1..253
        if (value == (STALE_MARKER & 0xff) || value == (dev.iomap.api.PageCacheOptions.POISON_BYTE & 0xff)) {
            value = 254;
        }
        return (byte) value;
    }

    /**
     * @param seed identifies the write
     * @param fileOffset file offset of the first byte
     * @param length bytes
     * @return the pattern in a buffer ready to write
     */
    public static ByteBuffer buffer(long seed, long fileOffset, int length) {
        return ByteBuffer.wrap(pattern(seed, fileOffset, length));
    }

    /**
     * Describes the first difference of two arrays, or returns null if they are equal.
     *
     * @param expected what should be there
     * @param actual what is there
     * @param baseOffset file offset of index 0, for the message
     * @return null, or a message naming the first differing offset, the bytes around it and how many
     *     differ
     */
    public static String firstDifference(byte[] expected, byte[] actual, long baseOffset) {
        int n = Math.min(expected.length, actual.length);
        int first = -1;
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (expected[i] != actual[i]) {
                if (first < 0) {
                    first = i;
                }
                count++;
            }
        }
        if (first < 0 && expected.length == actual.length) {
            return null;
        }
        StringBuilder out = new StringBuilder();
        if (expected.length != actual.length) {
            out.append("length: expected ").append(expected.length).append(", actual ").append(actual.length)
                    .append("; ");
        }
        if (first >= 0) {
            out.append(count).append(" bytes differ, first at file offset ").append(baseOffset + first)
                    .append(" (0x").append(Long.toHexString(baseOffset + first)).append(")\n")
                    .append(hexRows(expected, actual, first, baseOffset));
        }
        return out.toString();
    }

    /** Up to 16 rows "offset expected actual" from {@code first}. */
    static String hexRows(byte[] expected, byte[] actual, int first, long baseOffset) {
        StringBuilder out = new StringBuilder("    offset        expected actual\n");
        int end = Math.min(Math.min(expected.length, actual.length), first + 16);
        for (int i = first; i < end; i++) {
            out.append(String.format("    0x%-10x  %02x       %02x%s%n", baseOffset + i, expected[i] & 0xff,
                    actual[i] & 0xff, expected[i] == actual[i] ? "" : "  <"));
        }
        return out.toString();
    }
}
