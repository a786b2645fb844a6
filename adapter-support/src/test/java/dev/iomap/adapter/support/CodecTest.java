package dev.iomap.adapter.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** {@link Crc32c}, {@link BlockWriter} and {@link BlockReader}. */
class CodecTest {

    @Test
    void crc32cIsTheStandardCastagnoliChecksum() {
        byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);

        assertThat(Crc32c.of(check)).isEqualTo(0xE3069283);
        assertThat(Crc32c.of(ByteBuffer.wrap(check))).isEqualTo(0xE3069283);
        assertThat(Crc32c.of(bytesAround(check), 2, 9)).isEqualTo(0xE3069283);
        assertThat(Crc32c.of(ByteBuffer.wrap(bytesAround(check)), 2, 9)).isEqualTo(0xE3069283);
    }

    @Test
    void crc32cLeavesTheBufferPositionAlone() {
        ByteBuffer buffer = ByteBuffer.wrap("xx123456789".getBytes(StandardCharsets.US_ASCII)).position(2);

        assertThat(Crc32c.of(buffer)).isEqualTo(0xE3069283);
        assertThat(buffer.position()).isEqualTo(2);
    }

    @Test
    void writerLaysFieldsOutLittleEndian() throws Exception {
        byte[] bytes = BlockWriter.allocate(32, "test")
                .putByte(0xAB)
                .putInt(0x01020304)
                .putLong(0x1122334455667788L)
                .putString("é")
                .putBytes(new byte[] {7, 8})
                .toByteArray();

        assertThat(HexFormat.of().formatHex(bytes))
                .isEqualTo("ab" + "04030201" + "8877665544332211" + "02000000c3a9" + "0708");
    }

    @Test
    void readerReadsWhatTheWriterWrote() throws Exception {
        BlockWriter writer = BlockWriter.allocate(64, "test")
                .putByte(0xFE).putInt(-5).putLong(1L << 40).putString("volume").putBytes(ByteBuffer.wrap(new byte[] {1, 2}));
        BlockReader reader = new BlockReader(writer.written(), "test");

        assertThat(reader.getByte()).isEqualTo(0xFE);
        assertThat(reader.getInt()).isEqualTo(-5);
        assertThat(reader.getLong()).isEqualTo(1L << 40);
        assertThat(reader.getString()).isEqualTo("volume");
        assertThat(reader.getBytes(2)).containsExactly(1, 2);
        assertThat(reader.remaining()).isZero();
        assertThat(reader.position()).isEqualTo(writer.position()).isEqualTo(1 + 4 + 8 + 4 + 6 + 2);
    }

    @Test
    void writerRefusesAFieldThatDoesNotFitAndWritesNothingOfIt() throws Exception {
        BlockWriter writer = BlockWriter.allocate(7, "inode 12 payload").putInt(1);

        assertThatThrownBy(() -> writer.putInt(2))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("inode 12 payload: int at offset 4 does not fit: 3 bytes left");
        assertThatThrownBy(() -> writer.putString("abc"))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessageContaining("string of 3 UTF-8 bytes at offset 4 does not fit");
        assertThat(writer.position()).isEqualTo(4);
    }

    @Test
    void readerReportsTruncationAsCorruptionNamingWhereItWas() {
        BlockReader reader = new BlockReader(ByteBuffer.wrap(new byte[] {1, 2, 3}), "superblock at block 0");

        assertThatThrownBy(reader::getInt)
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("superblock at block 0: truncated: int at offset 0 runs past the end (3 bytes left)");
    }

    @Test
    void readerRefusesBadStrings() throws Exception {
        var tooLong = BlockWriter.allocate(8, "t").putInt(100).putInt(0).written();
        var negative = BlockWriter.allocate(8, "t").putInt(-1).written();
        var notUtf8 = BlockWriter.allocate(8, "t").putInt(1).putByte(0xFF).written();

        assertThatThrownBy(() -> new BlockReader(tooLong, "dir block 3").getString())
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("dir block 3: string at offset 0 claims 100 bytes but 4 remain");
        assertThatThrownBy(() -> new BlockReader(negative, "dir block 3").getString())
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("claims -1 bytes");
        assertThatThrownBy(() -> new BlockReader(notUtf8, "dir block 3").getString())
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("dir block 3: string at offset 0 is not UTF-8");
    }

    @Test
    void byteStringsAreWrittenAndReadExactly() throws Exception {
        // bytes that are not UTF-8: putString/getString would turn them into '?' or refuse them
        byte[] name = {'c', 'a', 'f', (byte) 0xe9, (byte) 0xff, (byte) 0xc3, 0};
        BlockWriter writer = BlockWriter.allocate(32, "test").putByteString(name).putByteString(new byte[0]);

        assertThat(HexFormat.of().formatHex(writer.toByteArray()))
                .isEqualTo("07000000" + "636166e9ffc300" + "00000000");
        BlockReader reader = new BlockReader(writer.written(), "test");
        assertThat(reader.getByteString()).containsExactly(name);
        assertThat(reader.getByteString()).isEmpty();
        assertThat(reader.remaining()).isZero();
    }

    @Test
    void byteStringsThatDoNotFitOrRunPastTheEndAreRefused() throws Exception {
        BlockWriter writer = BlockWriter.allocate(8, "dir block 3").putByte(1);
        var tooLong = BlockWriter.allocate(8, "t").putInt(5).putInt(0).written();
        var negative = BlockWriter.allocate(8, "t").putInt(-2).written();

        assertThatThrownBy(() -> writer.putByteString(new byte[4]))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("dir block 3: byte string of 4 bytes at offset 1 does not fit: 7 bytes left");
        assertThat(writer.position()).isEqualTo(1);
        assertThatThrownBy(() -> new BlockReader(tooLong, "dir block 3").getByteString())
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("dir block 3: byte string at offset 0 claims 5 bytes but 4 remain");
        assertThatThrownBy(() -> new BlockReader(negative, "dir block 3").getByteString())
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("dir block 3: byte string at offset 0 claims -2 bytes but 0 remain");
    }

    @Test
    void readerAndWriterLeaveTheirBuffersAlone() throws Exception {
        ByteBuffer target = ByteBuffer.allocate(16).position(4);
        new BlockWriter(target, "t").putInt(0x0A0B0C0D);
        BlockReader reader = new BlockReader(target, "t");

        assertThat(target.position()).isEqualTo(4);
        assertThat(reader.getInt()).isEqualTo(0x0A0B0C0D);
        assertThat(target.position()).isEqualTo(4);
    }

    private static byte[] bytesAround(byte[] middle) {
        byte[] bytes = new byte[middle.length + 4];
        System.arraycopy(middle, 0, bytes, 2, middle.length);
        bytes[0] = 'x';
        bytes[bytes.length - 1] = 'y';
        return bytes;
    }
}
