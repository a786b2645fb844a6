package dev.iomap.adapter.support.ns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link DirectoryBlocks}: names are byte strings in memory and on disk. */
class DirectoryBlocksTest {
    private static final int PAYLOAD = MetadataBlock.maxPayload(4096);
    private static final long DIR_INO = 7;

    private static String name(int... bytes) {
        byte[] raw = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            raw[i] = (byte) bytes[i];
        }
        return FileNames.decode(raw);
    }

    private static String filled(int length, int value) {
        byte[] raw = new byte[length];
        Arrays.fill(raw, (byte) value);
        return FileNames.decode(raw);
    }

    private static DirectoryBlocks decoded(ByteBuffer payload) throws CorruptFileSystemException {
        DirectoryBlocks directory = new DirectoryBlocks(PAYLOAD);
        directory.decodeBlock(new BlockReader(payload, "directory block 0"), DIR_INO, 0);
        return directory;
    }

    @Test
    void namesThatAreNotUtf8AreStoredAsTheirBytesAndReadBackAsTwoNames() throws Exception {
        String e9 = name('c', 'a', 'f', 0xe9);
        String e8 = name('c', 'a', 'f', 0xe8);
        DirectoryBlocks directory = new DirectoryBlocks(PAYLOAD);
        directory.add(e9, 10, FileType.REGULAR, directory.placeFor(e9));
        directory.add(e8, 11, FileType.REGULAR, directory.placeFor(e8));

        ByteBuffer payload = directory.encodeBlock(DIR_INO, 0);

        // header, then inode u64, type u8, name length u32 and the raw bytes, in the order added
        assertThat(HexFormat.of().formatHex(bytes(payload))).isEqualTo("0700000000000000" + "00000000" + "02000000"
                + "0a00000000000000" + "01" + "04000000" + "636166e9"
                + "0b00000000000000" + "01" + "04000000" + "636166e8");
        assertThat(decoded(payload).list()).containsExactly(new DirEntry(e8, 11, FileType.REGULAR),
                new DirEntry(e9, 10, FileType.REGULAR));
    }

    @Test
    void everyKindOfNameRoundTripsInByteOrder() throws Exception {
        List<String> names = new ArrayList<>(List.of("z", "\uFF61", "\uD83D\uDE00", "\u00e9", name(0xc3),
                name(0xed, 0xa0, 0x80), name(0xc0, 0xaf), filled(255, 0xff), "\u00e9".repeat(127) + "x", "..."));
        DirectoryBlocks directory = new DirectoryBlocks(PAYLOAD);
        long ino = 100;
        for (String name : names) {
            directory.add(name, ino++, FileType.REGULAR, 0);
        }

        DirectoryBlocks back = decoded(directory.encodeBlock(DIR_INO, 0));

        names.sort(FileNames.BYTE_ORDER);
        assertThat(back.list()).extracting(DirEntry::name).containsExactlyElementsOf(names);
        // unsigned bytes: 'z' (7A) < C3 < C3 A9 < ED A0 80 < EF BD A1 (U+FF61) < F0 9F 98 80 < FF...
        assertThat(names.subList(0, 3)).containsExactly("...", "z", name(0xc0, 0xaf));
        assertThat(names.indexOf("\uFF61")).isLessThan(names.indexOf("\uD83D\uDE00"));
        for (String name : names) {
            assertThat(back.get(name)).as(name).isNotNull();
        }
        assertThat(back.get(name(0xe9))).isNull();
    }

    @Test
    void entriesTakeTheBytesOfTheirNamesNotTheirChars() {
        assertThat(DirectoryBlocks.entryBytes(filled(255, 0x80))).isEqualTo(DirectoryBlocks.ENTRY_FIXED_BYTES + 255);
        assertThat(DirectoryBlocks.entryBytes("\u00e9".repeat(10))).isEqualTo(DirectoryBlocks.ENTRY_FIXED_BYTES + 20);
        assertThat(DirectoryBlocks.validName(filled(255, 0x80))).isTrue();
        assertThat(DirectoryBlocks.validName(filled(256, 0x80))).isFalse();
        assertThat(DirectoryBlocks.validName("\u00e9".repeat(128))).as("128 chars, 256 bytes").isFalse();
        assertThat(DirectoryBlocks.validName("caf\uDCC3\uDCA9")).as("a second spelling of caf\u00e9").isFalse();
        assertThat(DirectoryBlocks.validName("\uD800")).isFalse();
    }

    @Test
    void aBlockWrittenWithUtf8StringsReadsTheSame() throws Exception {
        // the encoding before names were byte strings: putString, i.e. u32 count + UTF-8
        ByteBuffer old = BlockWriter.allocate(256, "old block").putLong(DIR_INO).putInt(0).putInt(2)
                .putLong(3).putByte(FileTypeCodes.REGULAR).putString("caf\u00e9 \uD83D\uDE00")
                .putLong(4).putByte(FileTypeCodes.DIRECTORY).putString("d").written();

        assertThat(decoded(old).list()).containsExactly(new DirEntry("caf\u00e9 \uD83D\uDE00", 3, FileType.REGULAR),
                new DirEntry("d", 4, FileType.DIRECTORY));
    }

    @Test
    void badNamesOnDiskAreCorruption() throws Exception {
        byte[] tooLong = new byte[256];
        Arrays.fill(tooLong, (byte) 'n');
        List<byte[]> bad = List.of(new byte[0], new byte[] {'.'}, new byte[] {'.', '.'}, new byte[] {'a', '/', 'b'},
                new byte[] {'a', 0, 'b'}, tooLong);
        for (byte[] raw : bad) {
            ByteBuffer block = BlockWriter.allocate(512, "bad block").putLong(DIR_INO).putInt(0).putInt(1)
                    .putLong(3).putByte(FileTypeCodes.REGULAR).putByteString(raw).written();

            assertThatThrownBy(() -> decoded(block)).as(HexFormat.of().formatHex(raw))
                    .isInstanceOf(CorruptFileSystemException.class)
                    .hasMessageContaining("bad directory entry");
        }
    }

    @Test
    void aNameTwiceOnDiskIsCorruption() throws Exception {
        ByteBuffer block = BlockWriter.allocate(512, "bad block").putLong(DIR_INO).putInt(0).putInt(2)
                .putLong(3).putByte(FileTypeCodes.REGULAR).putByteString(new byte[] {'c', (byte) 0xe9})
                .putLong(4).putByte(FileTypeCodes.REGULAR).putByteString(new byte[] {'c', (byte) 0xe9}).written();

        assertThatThrownBy(() -> decoded(block)).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("bad directory entry 'c\uDCE9' -> inode 4");
    }

    @Test
    void entriesGoToTheFirstBlockWithRoomAndAnEmptyLastBlockIsGivenBack() {
        int payload = DirectoryBlocks.HEADER_BYTES + 284;
        DirectoryBlocks directory = new DirectoryBlocks(payload);
        String longest = filled(255, 'n');
        directory.add(longest, 3, FileType.REGULAR, directory.placeFor(longest));
        assertThat(directory.placeFor("b")).as("268 + 14 bytes fit in 284").isZero();
        directory.add("b", 4, FileType.SYMLINK, 0);
        assertThat(directory.placeFor("c")).as("268 + 14 + 14 bytes do not").isEqualTo(1);
        directory.add("c", 5, FileType.DIRECTORY, 1);

        assertThat(directory.blockCount()).isEqualTo(2);
        assertThat(directory.encodeBlock(DIR_INO, 0).remaining()).isEqualTo(16 + 268 + 14);
        assertThat(directory.get("c")).isEqualTo(new DirectoryBlocks.Entry(5, FileType.DIRECTORY, 1));
        assertThat(directory.lastBlockEmpty()).isFalse();
        assertThat(directory.remove("c")).isEqualTo(1);
        assertThat(directory.lastBlockEmpty()).isTrue();
        directory.dropLastBlock();
        assertThat(directory.blockCount()).isEqualTo(1);
        assertThat(directory.list()).extracting(DirEntry::name).containsExactly("b", longest);
        assertThatThrownBy(directory::dropLastBlock).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void misuseIsRefused() {
        assertThatThrownBy(() -> new DirectoryBlocks(DirectoryBlocks.HEADER_BYTES + 267))
                .isInstanceOf(IllegalArgumentException.class);
        DirectoryBlocks directory = new DirectoryBlocks(DirectoryBlocks.HEADER_BYTES + 268);
        directory.add(filled(255, 'n'), 3, FileType.REGULAR, 0);

        assertThatThrownBy(() -> directory.add(filled(255, 'n'), 4, FileType.REGULAR, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is in the directory already");
        assertThatThrownBy(() -> directory.add("x", 4, FileType.REGULAR, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no room for 'x'");
        assertThatThrownBy(() -> directory.add("x", 4, FileType.REGULAR, 2))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> directory.remove("x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("'x' is not in the directory");
    }

    @Test
    void aBlockOfAnotherDirectoryOrOutOfOrderIsCorruption() throws Exception {
        ByteBuffer foreign = BlockWriter.allocate(16, "b").putLong(8).putInt(0).putInt(0).written();
        assertThatThrownBy(() -> decoded(foreign)).isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("directory block 0: directory block of inode 8 index 0 with 0 entries, expected inode 7"
                        + " index 0 (before offset 16)");
        ByteBuffer second = BlockWriter.allocate(16, "b").putLong(DIR_INO).putInt(1).putInt(0).written();
        DirectoryBlocks directory = new DirectoryBlocks(PAYLOAD);
        assertThatThrownBy(() -> directory.decodeBlock(new BlockReader(second, "directory block 1"), DIR_INO, 1))
                .isInstanceOf(CorruptFileSystemException.class).hasMessageContaining("directory block 1 out of order");
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] copy = new byte[buffer.remaining()];
        buffer.duplicate().get(copy);
        return copy;
    }
}
