package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.UnrepresentableNameException;
import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * File names are byte strings, as in Linux: any byte but '/' and NUL, 1 to 255 bytes, compared byte
 * for byte. The API carries them in {@link FileNames}' form (UTF-8 where valid, every other byte as
 * the lone surrogate U+DC00 + byte), so an adapter must keep two names apart whenever their bytes
 * differ, store and list them exactly, count their length in bytes and list them in unsigned byte
 * order; a {@code String} that stands for no byte string is refused (EILSEQ) and creates nothing.
 *
 * <p>Issue 12, case 1: {@code caf\xe9.txt} and {@code caf\xe8.txt} once became one file.
 *
 * <p>Every test but one creates files; on an adapter with a fixed namespace
 * ({@link AdapterFixture#existingFiles()}) those are skipped and
 * {@link #aFixedNamespaceLooksUpByteNamesAsTheyAre} runs instead. Renames and subdirectories need
 * {@link Capability#DIRECTORIES}.
 */
public abstract class NamesContract extends AdapterContract {
    /** The bytes {@code caf\xe9.txt}: Latin-1 e-acute, not UTF-8. */
    protected static final String CAFE_E9 = bytes('c', 'a', 'f', 0xe9, '.', 't', 'x', 't');
    /** The bytes {@code caf\xe8.txt}: Latin-1 e-grave, not UTF-8. */
    protected static final String CAFE_E8 = bytes('c', 'a', 'f', 0xe8, '.', 't', 'x', 't');

    /**
     * @param values byte values, 0 to 255
     * @return the name those bytes are, in {@link FileNames}' form
     */
    protected static String bytes(int... values) {
        byte[] raw = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            raw[i] = (byte) values[i];
        }
        return FileNames.decode(raw);
    }

    /**
     * @param length how many bytes
     * @param value each byte's value
     * @return the name of {@code length} bytes of {@code value}
     */
    protected static String repeated(int length, int value) {
        byte[] raw = new byte[length];
        Arrays.fill(raw, (byte) value);
        return FileNames.decode(raw);
    }

    private void assumeCreates() {
        assumeTrue(kit().existingFiles() == null, kit().adapter().name() + " has a fixed namespace (no create)");
    }

    private List<String> names(String dir) throws IOException {
        List<String> names = new ArrayList<>();
        for (DirEntry entry : fs.readdir(dir)) {
            names.add(entry.name());
        }
        return names;
    }

    @Test
    void namesThatDifferOnlyInBytesThatAreNotUtf8NameTwoFiles() throws IOException {
        assumeCreates();
        assertThat(CAFE_E9).isEqualTo("caf\uDCE9.txt");
        write(create("/" + CAFE_E9), 0, new byte[] {'A'});
        write(create("/" + CAFE_E8), 0, new byte[] {'B'});

        assertContent(open("/" + CAFE_E9), new byte[] {'A'});
        assertContent(open("/" + CAFE_E8), new byte[] {'B'});
        assertThat(names("/")).containsExactly(CAFE_E8, CAFE_E9);
        assertThat(fs.stat("/" + CAFE_E9).ino()).isNotEqualTo(fs.stat("/" + CAFE_E8).ino());

        remountChecked();

        assertContent(open("/" + CAFE_E9), new byte[] {'A'});
        assertContent(open("/" + CAFE_E8), new byte[] {'B'});
        assertThat(fs.readdir("/")).extracting(DirEntry::nameBytes)
                .containsExactly(new byte[] {'c', 'a', 'f', (byte) 0xe8, '.', 't', 'x', 't'},
                        new byte[] {'c', 'a', 'f', (byte) 0xe9, '.', 't', 'x', 't'});
    }

    @Test
    void readdirListsNamesInUnsignedByteOrder() throws IOException {
        assumeCreates();
        // in bytes: 41 < 7A < 80 < C3 A9 < EF BD A1 < F0 9F 98 80 < FF. In UTF-16 the last four
        // would go U+D83D.., U+DC80, U+DCFF, U+FF61: a char above U+FFFF and one above U+FF00 catch it
        List<String> inByteOrder = List.of("A", "z", bytes(0x80), "\u00e9", "\uFF61", "\uD83D\uDE00", bytes(0xff));
        List<String> shuffled = List.of("\uFF61", bytes(0xff), "z", "\uD83D\uDE00", "A", bytes(0x80), "\u00e9");
        for (String name : shuffled) {
            create("/" + name);
        }

        assertThat(names("/")).containsExactlyElementsOf(inByteOrder);
        remountChecked();
        assertThat(names("/")).containsExactlyElementsOf(inByteOrder);
        for (String name : inByteOrder) {
            assertThat(fs.stat("/" + name).size()).as("size of '%s'", name).isZero();
        }
    }

    @Test
    void aNameOf255EscapedBytesWorksAnd256Fail() throws IOException {
        assumeCreates();
        String longest = repeated(255, 0xff);
        String tooLong = repeated(256, 0xff);
        byte[] data = writePattern(create("/" + longest), 0, 300, 12);

        assertThatThrownBy(() -> fs.create("/" + tooLong)).isInstanceOf(InvalidPathException.class)
                .isNotInstanceOf(UnrepresentableNameException.class)
                .hasMessageContaining("name longer than 255 bytes");
        remountChecked();

        assertContent(open("/" + longest), data);
        assertThat(fs.readdir("/")).singleElement().satisfies(entry -> {
            assertThat(entry.name()).isEqualTo(longest);
            assertThat(entry.nameBytes()).hasSize(255).containsOnly(0xff);
        });
        assertThatThrownBy(() -> fs.stat("/" + tooLong)).isInstanceOf(InvalidPathException.class)
                .hasMessageContaining("name longer than 255 bytes");
    }

    @Test
    void lengthIsCountedInBytesNotChars() throws IOException {
        assumeCreates();
        String e128 = "\u00e9".repeat(128); // 128 chars, 256 bytes
        String e127x = "\u00e9".repeat(127) + "x"; // 128 chars, 255 bytes

        assertThatThrownBy(() -> fs.create("/" + e128)).isInstanceOf(InvalidPathException.class)
                .hasMessageContaining("name longer than 255 bytes");
        create("/" + e127x);
        remountChecked();

        assertThat(names("/")).containsExactly(e127x);
    }

    @Test
    void aStringThatIsNoByteStringIsRefusedAndCreatesNothing() throws IOException {
        assumeCreates();
        // U+DCC3 U+DCA9 would be the bytes C3 A9, which are "e-acute": a second spelling of caf\u00e9
        String secondSpelling = "caf\uDCC3\uDCA9";
        String loneHigh = "\uD800";
        for (String name : List.of(secondSpelling, loneHigh)) {
            assertThatThrownBy(() -> fs.create("/" + name)).as(name).isInstanceOf(UnrepresentableNameException.class);
            if (has(Capability.DIRECTORIES)) {
                assertThatThrownBy(() -> fs.mkdir("/" + name)).as(name)
                        .isInstanceOf(UnrepresentableNameException.class);
            }
        }
        assertThat(fs.readdir("/")).isEmpty();

        byte[] data = writePattern(create("/caf\u00e9"), 0, 10, 5);
        assertThatThrownBy(() -> fs.open("/" + secondSpelling)).isInstanceOf(UnrepresentableNameException.class);
        assertThatThrownBy(() -> fs.unlink("/" + secondSpelling)).isInstanceOf(UnrepresentableNameException.class);
        assertThatThrownBy(() -> fs.stat("/" + loneHigh)).isInstanceOf(UnrepresentableNameException.class);
        if (has(Capability.DIRECTORIES)) {
            assertThatThrownBy(() -> fs.rename("/caf\u00e9", "/" + secondSpelling))
                    .isInstanceOf(UnrepresentableNameException.class);
        }
        remountChecked();
        assertThat(names("/")).containsExactly("caf\u00e9");
        assertContent(open("/caf\u00e9"), data);
    }

    @Test
    void unlinkRemovesExactlyTheNameWithThoseBytes() throws IOException {
        assumeCreates();
        write(create("/" + CAFE_E9), 0, new byte[] {'A'});
        write(create("/" + CAFE_E8), 0, new byte[] {'B'});
        write(create("/caf\u00e9.txt"), 0, new byte[] {'C'});

        fs.unlink("/" + CAFE_E9);

        assertThat(names("/")).containsExactly("caf\u00e9.txt", CAFE_E8);
        assertThatThrownBy(() -> fs.open("/" + CAFE_E9)).isInstanceOf(NoSuchFileException.class);
        remountChecked();
        assertThat(names("/")).containsExactly("caf\u00e9.txt", CAFE_E8);
        assertContent(open("/" + CAFE_E8), new byte[] {'B'});
        assertContent(open("/caf\u00e9.txt"), new byte[] {'C'});
    }

    @Test
    void renameMovesByteNamesBetweenDirectoriesWithByteNames() throws IOException {
        assumeCreates();
        assumeCapable(Capability.DIRECTORIES);
        String dir = bytes('d', 0xc3); // a lone C3: the start of a UTF-8 sequence, cut short
        byte[] a = writePattern(create("/" + CAFE_E9), 0, 1000, 1);
        byte[] b = writePattern(create("/" + CAFE_E8), 0, 2000, 2);
        fs.mkdir("/" + dir);

        fs.rename("/" + CAFE_E9, "/" + dir + "/" + CAFE_E8);
        fs.rename("/" + CAFE_E8, "/" + dir + "/" + CAFE_E9);

        assertThat(names("/")).containsExactly(dir);
        assertThat(names("/" + dir)).containsExactly(CAFE_E8, CAFE_E9);
        remountChecked();
        assertContent(open("/" + dir + "/" + CAFE_E8), a);
        assertContent(open("/" + dir + "/" + CAFE_E9), b);

        fs.rename("/" + dir + "/" + CAFE_E8, "/" + dir + "/" + CAFE_E9);

        assertThat(names("/" + dir)).containsExactly(CAFE_E9);
        remountChecked();
        assertContent(open("/" + dir + "/" + CAFE_E9), a);
        fs.unlink("/" + dir + "/" + CAFE_E9);
        fs.rmdir("/" + dir);
        assertThat(fs.readdir("/")).isEmpty();
    }

    /**
     * For an adapter whose namespace is fixed: a byte name that is not one of its files is absent (not
     * decoded into one of them), creating it is refused, and every name it lists is in
     * {@link FileNames}' form and in byte order.
     */
    @Test
    void aFixedNamespaceLooksUpByteNamesAsTheyAre() throws IOException {
        assumeTrue(kit().existingFiles() != null, "the other tests cover an adapter that creates files");
        List<String> before = names("/");
        for (String name : List.of(CAFE_E9, CAFE_E8, repeated(255, 0xb0), "\uFF61")) {
            assertThatThrownBy(() -> fs.stat("/" + name)).as(name).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> fs.create("/" + name)).as(name).isInstanceOf(IOException.class);
        }
        assertThatThrownBy(() -> fs.create("/caf\uDCC3\uDCA9")).isInstanceOf(UnrepresentableNameException.class);
        assertThatThrownBy(() -> fs.stat("/" + repeated(256, 0xb0))).isInstanceOf(InvalidPathException.class)
                .hasMessageContaining("name longer than 255 bytes");

        assertThat(names("/")).isEqualTo(before).isSortedAccordingTo(FileNames.BYTE_ORDER);
        for (String dir : before) {
            if (fs.stat("/" + dir).isDirectory()) {
                assertThat(names("/" + dir)).as(dir).isSortedAccordingTo(FileNames.BYTE_ORDER)
                        .allSatisfy(name -> assertThat(FileNames.isValid(name)).as(name).isTrue());
            }
        }
    }
}
