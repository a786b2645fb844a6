package dev.iomap.api;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.util.Arrays;
import java.util.Comparator;

/**
 * File names are byte strings, as in Linux: any byte but {@code '/'} and NUL, 1 to
 * {@value #MAX_NAME_BYTES} bytes, compared byte for byte. This class is the one mapping between
 * such a byte string and the {@code String} the Java API carries it in.
 *
 * <p>The mapping is UTF-8 where the bytes are valid UTF-8, and every byte that is not part of a valid
 * UTF-8 sequence becomes the lone surrogate {@code U+DC00 + byte} (U+DC80 to U+DCFF: "surrogate
 * escape", as Python's PEP 383 does for POSIX file names). {@link #decode} accepts every byte string;
 * {@link #encode} accepts exactly the strings {@code decode} returns and refuses every other one with
 * {@link UnrepresentableNameException} (EILSEQ). So the mapping is one-to-one both ways: two
 * different byte strings never share a {@code String}, and two different accepted {@code String}s
 * never share a byte string. Names that are valid UTF-8 (nearly all) are the plain strings one
 * expects.
 *
 * <p>Adapters store {@link #encode}'s bytes on disk, count lengths with it and sort with
 * {@link #BYTE_ORDER}; the FUSE bridge passes the kernel's bytes through {@link #decode}.
 */
public final class FileNames {
    /** The longest name in bytes, as in Linux ({@code NAME_MAX}). */
    public static final int MAX_NAME_BYTES = 255;
    /** Longest symbolic link target in bytes ({@code PATH_MAX} less its NUL). */
    public static final int MAX_TARGET_BYTES = 4095;

    /** Orders names as their byte strings compare, unsigned byte by byte (what readdir sorts by). */
    public static final Comparator<String> BYTE_ORDER = (a, b) -> Arrays.compareUnsigned(encode(a), encode(b));

    private static final char ESCAPE_BASE = '\uDC00';

    private FileNames() {
    }

    /**
     * @param bytes a byte string (any bytes; validity as a name is {@link #check}'s business)
     * @return its {@code String} form: UTF-8, with each byte outside a valid sequence escaped
     */
    public static String decode(byte[] bytes) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        while (true) {
            CoderResult result = decoder.decode(in, out, true);
            if (result.isUnderflow()) {
                break;
            }
            if (result.isError()) {
                for (int i = 0; i < result.length(); i++) {
                    out.put((char) (ESCAPE_BASE + (in.get() & 0xff)));
                }
            } else {
                throw new IllegalStateException("UTF-8 decoding overflowed a buffer of one char per byte");
            }
        }
        decoder.flush(out);
        return out.flip().toString();
    }

    /**
     * @param name a name or path in {@link #decode}'s form
     * @return the byte string it stands for
     * @throws UnrepresentableNameException if {@code name} is not a string {@code decode} returns
     */
    public static byte[] encode(String name) {
        if (!hasSurrogate(name)) {
            // well-formed UTF-16 without surrogates: UTF-8 round-trips exactly, nothing to verify
            return name.getBytes(StandardCharsets.UTF_8);
        }
        byte[] bytes = encodeLeniently(name);
        if (bytes == null || !decode(bytes).equals(name)) {
            throw new UnrepresentableNameException(name, "not a byte string: a lone surrogate, or escaped bytes"
                    + " that spell UTF-8 (Invalid or incomplete multibyte or wide character)");
        }
        return bytes;
    }

    /** UTF-8 with escapes turned back into bytes; null on a lone surrogate that is not an escape. */
    private static boolean hasSurrogate(String name) {
        for (int i = 0; i < name.length(); i++) {
            if (Character.isSurrogate(name.charAt(i))) {
                return true;
            }
        }
        return false;
    }

    private static byte[] encodeLeniently(String name) {
        ByteBuffer out = ByteBuffer.allocate(name.length() * 3);
        var encoder = StandardCharsets.UTF_8.newEncoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        int i = 0;
        while (i < name.length()) {
            char c = name.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                i += 2;
                encodeChars(encoder, name, i - 2, i, out);
            } else if (Character.isSurrogate(c)) {
                if (c < '\uDC80' || c > '\uDCFF') {
                    return null;
                }
                out.put((byte) (c - ESCAPE_BASE));
                i++;
            } else {
                int start = i;
                while (i < name.length() && !Character.isSurrogate(name.charAt(i))) {
                    i++;
                }
                encodeChars(encoder, name, start, i, out);
            }
        }
        return Arrays.copyOf(out.array(), out.position());
    }

    private static void encodeChars(CharsetEncoder encoder, String name, int from, int to,
            ByteBuffer out) {
        try {
            out.put(encoder.reset().encode(CharBuffer.wrap(name, from, to)));
        } catch (CharacterCodingException e) {
            throw new IllegalStateException("well-formed UTF-16 did not encode as UTF-8", e);
        }
    }

    /**
     * @param name a name in {@link #decode}'s form
     * @return its length in bytes
     * @throws UnrepresentableNameException if it is not in that form
     */
    public static int byteLength(String name) {
        return encode(name).length;
    }

    /**
     * Checks one name (a path component).
     *
     * @param name the name
     * @return its bytes
     * @throws UnrepresentableNameException if it stands for no byte string (EILSEQ)
     * @throws InvalidPathException if it is empty, {@code "."}, {@code ".."}, holds
     *     {@code '/'} or NUL, or is longer than {@value #MAX_NAME_BYTES} bytes (the message then says
     *     "name longer than 255 bytes", ENAMETOOLONG)
     */
    public static byte[] check(String name) {
        if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0
                || name.indexOf('\0') >= 0) {
            throw new InvalidPathException(name, "empty, '.', '..', '/' or NUL in name");
        }
        byte[] bytes = encode(name);
        if (bytes.length > MAX_NAME_BYTES) {
            throw new InvalidPathException(name, "name longer than " + MAX_NAME_BYTES + " bytes");
        }
        return bytes;
    }

    /**
     * Checks a symbolic link's target: a path of any names ('/' separated, relative or absolute,
     * {@code .} and {@code ..} allowed), kept as bytes.
     *
     * @param target the target in {@link #decode}'s form
     * @return its bytes
     * @throws UnrepresentableNameException if it stands for no byte string (EILSEQ)
     * @throws InvalidPathException if it is empty, holds a NUL, or is longer than
     *     {@value #MAX_TARGET_BYTES} bytes (the message then says "target longer than 4095 bytes",
     *     ENAMETOOLONG)
     */
    public static byte[] checkTarget(String target) {
        if (target.isEmpty() || target.indexOf('\0') >= 0) {
            throw new InvalidPathException(target, "empty symbolic link target, or NUL in it");
        }
        byte[] bytes = encode(target);
        if (bytes.length > MAX_TARGET_BYTES) {
            throw new InvalidPathException(target.substring(0, 64) + "...",
                    "target longer than " + MAX_TARGET_BYTES + " bytes");
        }
        return bytes;
    }

    /**
     * @param name any string
     * @return whether {@link #check} accepts it
     */
    public static boolean isValid(String name) {
        try {
            check(name);
            return true;
        } catch (InvalidPathException e) {
            return false;
        }
    }
}
