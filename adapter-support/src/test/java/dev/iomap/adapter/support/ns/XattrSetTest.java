package dev.iomap.adapter.support.ns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** {@link XattrSet}: the set in memory and its exact encoding. */
class XattrSetTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void encodesCountThenEachAttributeInByteOrderOfItsName() throws Exception {
        XattrSet set = new XattrSet();
        set.put("user.b", new byte[] {1, 2});
        set.put("user.a", new byte[0]);

        byte[] encoded = set.encode();

        assertThat(HEX.formatHex(encoded)).isEqualTo("02000000"
                + "06" + "00000000" + "757365722e61"
                + "06" + "02000000" + "757365722e62" + "0102");
        assertThat(set.encodedBytes()).isEqualTo(28).isEqualTo(encoded.length);
        XattrSet back = XattrSet.decode(encoded, "inode 7");
        assertThat(back.names()).containsExactly("user.a", "user.b");
        assertThat(back.get("user.b")).containsExactly(1, 2);
        assertThat(back.get("user.a")).isEmpty();
        assertThat(back.get("user.c")).isNull();
    }

    @Test
    void sizeWithCountsAReplacedValueOnce() {
        XattrSet set = new XattrSet();
        assertThat(set.encodedBytes()).isEqualTo(XattrSet.FIXED_BYTES);
        assertThat(set.sizeWith("user.x", 10)).isEqualTo(4 + 5 + 6 + 10);
        set.put("user.x", new byte[10]);
        assertThat(set.sizeWith("user.x", 3)).isEqualTo(4 + 5 + 6 + 3);
        set.put("user.x", new byte[3]);
        assertThat(set.encodedBytes()).isEqualTo(18);
        assertThat(set.remove("user.x")).isTrue();
        assertThat(set.remove("user.x")).isFalse();
        assertThat(set.encodedBytes()).isEqualTo(4);
        assertThat(set.isEmpty()).isTrue();
    }

    @Test
    void valuesAreCopiedInAndOutAndACopyIsIndependent() {
        byte[] value = {5};
        XattrSet set = new XattrSet();
        set.put("user.v", value);
        value[0] = 6;
        set.get("user.v")[0] = 7;
        XattrSet copy = set.copy();
        copy.put("user.w", new byte[] {1});
        copy.remove("user.v");

        assertThat(set.get("user.v")).containsExactly(5);
        assertThat(set.names()).containsExactly("user.v");
        assertThat(copy.names()).containsExactly("user.w");
        assertThat(copy.encodedBytes()).isEqualTo(4 + 5 + 6 + 1);
    }

    @Test
    void damagedEncodingsAreCorruption() {
        String[][] cases = {
            {"00000000", "holds 0 attributes in 4 bytes"},
            {"01000000" + "01" + "00000000" + "61", "attribute 0 has a bad name"},
            {"02000000" + "06" + "00000000" + "757365722e62" + "06" + "00000000" + "757365722e61",
                "attribute 'user.a' is out of order or repeated"},
            {"01000000" + "06" + "00000000" + "757365722e61" + "ff", "1 bytes follow the last attribute"},
            {"01000000" + "06" + "01000100" + "757365722e61", "has a name of 6 bytes and a value of 65537"},
        };
        for (String[] c : cases) {
            assertThatThrownBy(() -> XattrSet.decode(HEX.parseHex(c[0]), "inode 7")).as(c[1])
                    .isInstanceOf(CorruptFileSystemException.class)
                    .hasMessageStartingWith("inode 7 extended attributes: ")
                    .hasMessageContaining(c[1]);
        }
    }
}
