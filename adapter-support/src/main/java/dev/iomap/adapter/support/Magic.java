package dev.iomap.adapter.support;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/** Magic numbers: making them from text and describing them in error messages. */
final class Magic {
    private Magic() {
    }

    /**
     * @param text exactly 4 ASCII characters
     * @return them as an int whose little-endian bytes are the text, first character in the least
     *     significant byte: a hex dump of the device shows the text
     * @throws IllegalArgumentException if {@code text} is not 4 ASCII characters
     */
    static int fromText(String text) {
        byte[] bytes = ascii(text, 4);
        return (bytes[0] & 0xFF) | (bytes[1] & 0xFF) << 8 | (bytes[2] & 0xFF) << 16 | (bytes[3] & 0xFF) << 24;
    }

    /**
     * @param text ASCII characters
     * @param length how many there must be
     * @return their bytes
     * @throws IllegalArgumentException if {@code text} is not {@code length} ASCII characters
     */
    static byte[] ascii(String text, int length) {
        if (text.length() != length || !StandardCharsets.US_ASCII.newEncoder().canEncode(text)) {
            throw new IllegalArgumentException(
                    "a magic is " + length + " ASCII characters, got \"" + text + "\"");
        }
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * @return e.g. {@code 0x46474158 "XAGF"}: the int, then its little-endian bytes as text when every
     *     one is printable
     */
    static String describe(int magic) {
        byte[] bytes = {(byte) magic, (byte) (magic >>> 8), (byte) (magic >>> 16), (byte) (magic >>> 24)};
        return String.format("0x%08x", magic) + printable(bytes);
    }

    /** @return e.g. {@code 0x494f4d4150584653 "IOMAPXFS"}, the text only when every byte is printable */
    static String describe(byte[] magic) {
        return "0x" + HexFormat.of().formatHex(magic) + printable(magic);
    }

    private static String printable(byte[] bytes) {
        for (byte b : bytes) {
            if (b < 0x20 || b > 0x7e) {
                return "";
            }
        }
        return " \"" + new String(bytes, StandardCharsets.US_ASCII) + "\"";
    }
}
