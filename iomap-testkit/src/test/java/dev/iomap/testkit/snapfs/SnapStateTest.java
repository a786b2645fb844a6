package dev.iomap.testkit.snapfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** snapfs metadata: names are byte strings, persisted exactly and kept in byte order. */
class SnapStateTest {
    /** A layout whose data area holds anything these states map. */
    private static final SnapLayout LAYOUT = SnapLayout.forCapacity(64L << 20, 4096);


    private static String name(int... bytes) {
        byte[] raw = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            raw[i] = (byte) bytes[i];
        }
        return FileNames.decode(raw);
    }

    private static SnapState withRootEntries(List<String> names) {
        SnapState state = SnapState.empty();
        SnapState.Inode root = state.inodes.get(SnapState.ROOT);
        for (String name : names) {
            long ino = state.nextIno++;
            state.inodes.put(ino, new SnapState.Inode(ino, FileType.REGULAR));
            root.entries.put(name, ino);
        }
        return state;
    }

    @Test
    void namesThatAreNotUtf8ArePersistedAsTheirBytesAndStayTwoNames() throws Exception {
        String e9 = name('c', 'a', 'f', 0xe9);
        String e8 = name('c', 'a', 'f', 0xe8);

        byte[] payload = withRootEntries(List.of(e9, e8)).serialize();

        String hex = HexFormat.of().formatHex(payload);
        // u16 byte count and the bytes, in byte order: caf\xe8 (inode 3) before caf\xe9 (inode 2)
        assertThat(hex).contains("0004" + "636166e8" + "0000000000000003" + "0004" + "636166e9" + "0000000000000002");
        SnapState.Inode root = SnapState.deserialize(payload, LAYOUT).inodes.get(SnapState.ROOT);
        assertThat(root.entries).containsExactly(Map.entry(e8, 3L), Map.entry(e9, 2L));
    }

    @Test
    void entriesAreInByteOrderNotUtf16Order() throws Exception {
        List<String> names = List.of("\uD83D\uDE00", "\uFF61", name(0x80), "z", "\u00e9");

        SnapState.Inode root = SnapState.deserialize(withRootEntries(names).serialize(), LAYOUT).inodes.get(SnapState.ROOT);

        // 7A < 80 < C3 A9 < EF BD A1 < F0 9F 98 80; in UTF-16 U+FF61 would come after U+D83D
        assertThat(root.entries.keySet()).containsExactly("z", name(0x80), "\u00e9", "\uFF61", "\uD83D\uDE00");
    }

    @Test
    void aNameWrittenWithWriteUtfReadsTheSame() throws Exception {
        // the encoding before names were byte strings, for a root holding "caf\u00e9" -> inode 2
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeLong(3);
            out.writeInt(2);
            inode(out, SnapState.ROOT, FileType.DIRECTORY, 1);
            out.writeUTF("caf\u00e9");
            out.writeLong(2);
            out.writeInt(0);
            inode(out, 2, FileType.REGULAR, 0);
            out.writeInt(0);
        }

        SnapState state = SnapState.deserialize(bytes.toByteArray(), LAYOUT);

        assertThat(state.inodes.get(SnapState.ROOT).entries).containsExactly(Map.entry("caf\u00e9", 2L));
    }

    @Test
    void aNameTwiceIsCorruption() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeLong(4);
            out.writeInt(1);
            inode(out, SnapState.ROOT, FileType.DIRECTORY, 2);
            for (long ino = 2; ino <= 3; ino++) {
                out.writeShort(2);
                out.write(new byte[] {'a', (byte) 0xff});
                out.writeLong(ino);
            }
            out.writeInt(0);
        }

        assertThatThrownBy(() -> SnapState.deserialize(bytes.toByteArray(), LAYOUT))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("has the name 'a\uDCFF' twice");
    }

    private static void inode(DataOutputStream out, long ino, FileType type, int entries) throws IOException {
        out.writeLong(ino);
        out.writeByte(type.ordinal());
        out.writeLong(0);
        out.writeInt(1);
        out.writeLong(0);
        out.writeInt(entries);
    }
}
