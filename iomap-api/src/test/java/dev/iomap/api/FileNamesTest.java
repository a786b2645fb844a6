package dev.iomap.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FileNamesTest {

    @Test
    void namesThatDifferOnlyInBytesThatAreNotUtf8StayDifferent() {
        // issue 12 case 1: caf\xe9 and caf\xe8 both became "caf\uFFFD" and named one file
        String e9 = FileNames.decode(new byte[] {'c', 'a', 'f', (byte) 0xe9, '.', 't', 'x', 't'});
        String e8 = FileNames.decode(new byte[] {'c', 'a', 'f', (byte) 0xe8, '.', 't', 'x', 't'});

        assertThat(e9).isEqualTo("caf\uDCE9.txt").isNotEqualTo(e8);
        assertThat(FileNames.encode(e9)).containsExactly('c', 'a', 'f', 0xe9, '.', 't', 'x', 't');
        assertThat(FileNames.encode(e8)).containsExactly('c', 'a', 'f', 0xe8, '.', 't', 'x', 't');
    }

    @Test
    void validUtf8IsThePlainString() {
        byte[] bytes = "café/日本/😀".getBytes(StandardCharsets.UTF_8);

        assertThat(FileNames.decode(bytes)).isEqualTo("café/日本/😀");
        assertThat(FileNames.encode("café/日本/😀")).isEqualTo(bytes);
    }

    @Test
    void aSecondSpellingOfTheSameBytesIsRefused() {
        // U+DCC3 U+DCA9 would be the bytes C3 A9, which are "é": accepting it would give one byte
        // string two names
        assertThatThrownBy(() -> FileNames.encode("caf\uDCC3\uDCA9"))
                .isInstanceOf(UnrepresentableNameException.class);
    }

    @Test
    void loneSurrogatesThatAreNotEscapesAreRefused() {
        for (String bad : List.of("a\uD800b", "\uDFFF", "x\uDC7F", "\uD83D")) {
            assertThatThrownBy(() -> FileNames.encode(bad)).as(bad)
                    .isInstanceOf(UnrepresentableNameException.class)
                    .isInstanceOf(InvalidPathException.class);
        }
    }

    @Test
    void encodedSurrogatesAndOverlongFormsAreBytesNotCharacters() {
        byte[] surrogate = {(byte) 0xed, (byte) 0xa0, (byte) 0x80};
        byte[] overlongSlash = {(byte) 0xc0, (byte) 0xaf};

        assertThat(FileNames.decode(surrogate)).isEqualTo("\uDCED\uDCA0\uDC80");
        assertThat(FileNames.decode(overlongSlash)).isEqualTo("\uDCC0\uDCAF");
        assertThat(FileNames.encode(FileNames.decode(overlongSlash))).isEqualTo(overlongSlash);
    }

    @Test
    void checkCountsBytesNotChars() {
        String e255 = "é".repeat(127) + "x"; // 255 bytes
        String e256 = "é".repeat(128); // 256 bytes, 128 chars

        assertThat(FileNames.check(e255)).hasSize(255);
        assertThatThrownBy(() -> FileNames.check(e256)).isInstanceOf(InvalidPathException.class)
                .hasMessageContaining("longer than 255 bytes");
        String escaped255 = FileNames.decode(filled(255, (byte) 0xff));
        assertThat(FileNames.check(escaped255)).hasSize(255);
        assertThatThrownBy(() -> FileNames.check(FileNames.decode(filled(256, (byte) 0xff))))
                .hasMessageContaining("longer than 255 bytes");
    }

    @Test
    void checkRefusesWhatLinuxRefuses() {
        for (String bad : List.of("", ".", "..", "a/b", "a\0b")) {
            assertThat(FileNames.isValid(bad)).as("'%s'", bad).isFalse();
        }
        assertThat(FileNames.isValid("...")).isTrue();
        assertThat(FileNames.isValid("\uDCFF")).isTrue();
    }

    @Test
    void byteOrderIsUnsignedByteOrderNotUtf16Order() {
        // U+FF61 sorts after U+1F600 in bytes (EF BD A1 < F0 9F 98 80) but before it in UTF-16
        // (FF61 > D83D); and an escaped 0x80 sorts after ASCII
        List<String> names = new java.util.ArrayList<>(List.of("😀", "\uFF61", "\uDC80", "z"));

        names.sort(FileNames.BYTE_ORDER);

        assertThat(names).containsExactly("z", "\uDC80", "\uFF61", "😀");
    }

    /** Seeded: {@code -Diomap.names.seed} and {@code -Diomap.names.tries} for a longer run. */
    private static final long SEED = Long.getLong("iomap.names.seed", 12);
    private static final int TRIES = Integer.getInteger("iomap.names.tries", 20_000);
    private static final byte[] INTERESTING = {'a', 0x7f, (byte) 0x80, (byte) 0xbf, (byte) 0xc2, (byte) 0xc3,
        (byte) 0xa9, (byte) 0xe2, (byte) 0x82, (byte) 0xac, (byte) 0xed, (byte) 0xa0, (byte) 0xf0, (byte) 0x9f,
        (byte) 0x98, (byte) 0xf4, (byte) 0xff, (byte) 0xc0};
    private static final String CHARS = "a\u00e9\u20ac\uD83D\uDE00\uDC80\uDCC3\uDCA9\uDCFF\uD800\uDFFF";

    @Test
    void everyByteStringRoundTripsAndNoTwoShareAName() {
        Random random = new Random(SEED);
        Map<String, byte[]> seen = new HashMap<>();
        for (int i = 0; i < TRIES; i++) {
            byte[] bytes = randomBytes(random);
            String name = FileNames.decode(bytes);

            assertThat(FileNames.encode(name)).as("seed %d try %d", SEED, i).isEqualTo(bytes);
            byte[] earlier = seen.putIfAbsent(name, bytes);
            if (earlier != null) {
                assertThat(earlier).as("two byte strings decoded to '%s'", name).isEqualTo(bytes);
            }
        }
    }

    @Test
    void anAcceptedStringDecodesBackToItself() {
        Random random = new Random(SEED);
        int accepted = 0;
        for (int i = 0; i < TRIES; i++) {
            StringBuilder s = new StringBuilder();
            for (int n = random.nextInt(9); n > 0; n--) {
                s.append(CHARS.charAt(random.nextInt(CHARS.length())));
            }
            String name = s.toString();
            try {
                byte[] bytes = FileNames.encode(name);
                accepted++;
                assertThat(FileNames.decode(bytes)).as("seed %d try %d", SEED, i).isEqualTo(name);
            } catch (UnrepresentableNameException refused) {
                assertThat(name.chars().anyMatch(c -> Character.isSurrogate((char) c))).isTrue();
            }
        }
        assertThat(accepted).as("the generator produces accepted strings too").isGreaterThan(TRIES / 20);
    }

    private static byte[] randomBytes(Random random) {
        byte[] bytes = new byte[random.nextInt(13)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = random.nextBoolean() ? INTERESTING[random.nextInt(INTERESTING.length)]
                    : (byte) random.nextInt(256);
        }
        return bytes;
    }

    private static byte[] filled(int length, byte value) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, value);
        return bytes;
    }
}
