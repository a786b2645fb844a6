package dev.iomap.adapter.support.ns;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import org.junit.jupiter.api.Test;

/** {@link PosixRules} and {@link FileTypeCodes}. */
class PosixRulesTest {
    private static final NewInodeAttributes ASKED = new NewInodeAttributes(0644, 1000, 1000);

    @Test
    void aSetGroupIdDirectoryGivesItsGroupAndItsBitToNewDirectoriesOnly() {
        assertThat(PosixRules.newMode(FileType.DIRECTORY, 0755, 02775)).isEqualTo(02755);
        assertThat(PosixRules.newMode(FileType.REGULAR, 0644, 02775)).isEqualTo(0644);
        assertThat(PosixRules.newMode(FileType.SYMLINK, 0777, 02775)).isEqualTo(0777);
        assertThat(PosixRules.newGid(ASKED, 02775, 50)).isEqualTo(50);
    }

    @Test
    void anOrdinaryDirectoryChangesNothing() {
        assertThat(PosixRules.newMode(FileType.DIRECTORY, 0755, 0775)).isEqualTo(0755);
        assertThat(PosixRules.newMode(FileType.DIRECTORY, 02755, 0775)).as("the bit asked for stays").isEqualTo(02755);
        assertThat(PosixRules.newGid(ASKED, 0775, 50)).isEqualTo(1000);
    }

    @Test
    void typeCodesRoundTripAndUnknownCodesNameNoType() {
        for (FileType type : FileType.values()) {
            assertThat(FileTypeCodes.typeOf(FileTypeCodes.code(type))).isEqualTo(type);
        }
        assertThat(FileTypeCodes.code(FileType.REGULAR)).isEqualTo(1);
        assertThat(FileTypeCodes.code(FileType.DIRECTORY)).isEqualTo(2);
        assertThat(FileTypeCodes.code(FileType.SYMLINK)).isEqualTo(3);
        assertThat(FileTypeCodes.code(FileType.FIFO)).isEqualTo(4);
        assertThat(FileTypeCodes.code(FileType.CHARACTER_DEVICE)).isEqualTo(5);
        assertThat(FileTypeCodes.code(FileType.BLOCK_DEVICE)).isEqualTo(6);
        assertThat(FileTypeCodes.code(FileType.SOCKET)).isEqualTo(7);
        assertThat(FileTypeCodes.typeOf(FileTypeCodes.FREE)).isNull();
        assertThat(FileTypeCodes.typeOf(8)).isNull();
        assertThat(FileTypeCodes.typeOf(-1)).isNull();
    }
}
