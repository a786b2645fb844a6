package dev.iomap.core.vfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FileNames;
import dev.iomap.api.UnrepresentableNameException;
import java.nio.file.InvalidPathException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PathsTest {

    private static String escaped(int count, int value) {
        byte[] bytes = new byte[count];
        Arrays.fill(bytes, (byte) value);
        return FileNames.decode(bytes);
    }

    @Test
    void namesAreSplitAndKeptAsTheyAre() {
        assertThat(Paths.names("/")).isEmpty();
        assertThat(Paths.names("/caf\uDCE9.txt/caf\u00e9/")).containsExactly("caf\uDCE9.txt", "caf\u00e9");
    }

    @Test
    void lengthIsCountedInBytesNotChars() {
        String e255 = "\u00e9".repeat(127) + "x";
        String e256 = "\u00e9".repeat(128);

        assertThat(Paths.names("/d/" + e255)).containsExactly("d", e255);
        assertThat(Paths.names("/" + escaped(255, 0xff))).containsExactly(escaped(255, 0xff));
        assertThatThrownBy(() -> Paths.names("/d/" + e256)).isExactlyInstanceOf(InvalidPathException.class)
                .hasMessageContaining("name longer than 255 bytes");
        assertThatThrownBy(() -> Paths.names("/" + escaped(256, 0x80))).isExactlyInstanceOf(InvalidPathException.class)
                .hasMessageContaining("name longer than 255 bytes");
    }

    @Test
    void aNameThatIsNoByteStringIsRefusedAsEilseq() {
        for (String name : new String[] {"caf\uDCC3\uDCA9", "\uD800", "a\uDFFFb", "x\uDC7F"}) {
            assertThatThrownBy(() -> Paths.names("/d/" + name + "/f")).as(name)
                    .isInstanceOf(UnrepresentableNameException.class)
                    .satisfies(e -> assertThat(((InvalidPathException) e).getInput()).isEqualTo("/d/" + name + "/f"));
        }
    }

    @Test
    void emptyDotAndNulNamesAreRefused() {
        for (String path : new String[] {"relative", "//a", "/a/./b", "/a/../b", "/a\0b"}) {
            assertThatThrownBy(() -> Paths.names(path)).as(path).isExactlyInstanceOf(InvalidPathException.class);
        }
    }
}
