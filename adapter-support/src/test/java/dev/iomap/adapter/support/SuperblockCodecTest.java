package dev.iomap.adapter.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class SuperblockCodecTest {
    private static final int BLOCK = 512;
    private final SuperblockCodec codec = new SuperblockCodec("xfs-like", "IOMAPXFS", 2);

    @Test
    void encodesMagicVersionLengthPayloadAndChecksum() throws Exception {
        ByteBuffer block = codec.encode(ByteBuffer.wrap(new byte[] {1, 2, 3}), BLOCK);

        assertThat(block.remaining()).isEqualTo(BLOCK);
        assertThat(hex(block, 0, 23)).isEqualTo("494f4d4150584653" + "02000000" + "03000000" + "010203" + "417ad994");
        assertThat(hex(block, 23, BLOCK - 23)).matches("(00)+");
    }

    @Test
    void decodesWhatItEncoded() throws Exception {
        ByteBuffer payload = BlockWriter.allocate(64, "payload").putLong(1L << 33).putString("label").written();

        SuperblockCodec.Decoded decoded = codec.decode(codec.encode(payload, BLOCK), 0);

        assertThat(decoded.version()).isEqualTo(2);
        assertThat(decoded.payload()).isEqualTo(payload);
        assertThat(decoded.payload().isReadOnly()).isTrue();
        BlockReader reader = new BlockReader(decoded.payload(), "payload");
        assertThat(reader.getLong()).isEqualTo(1L << 33);
        assertThat(reader.getString()).isEqualTo("label");
    }

    @Test
    void writesAndReadsThroughADeviceAsMetadata() throws Exception {
        var device = new RamBlockDevice(BLOCK, 8 * BLOCK);

        codec.write(device, 3, ByteBuffer.wrap(new byte[] {4, 5}));

        assertThat(device.stats().metadataBytesWritten()).isEqualTo(BLOCK);
        assertThat(codec.read(device, 3).payload()).isEqualTo(ByteBuffer.wrap(new byte[] {4, 5}));
        assertThat(codec.hasMagic(ByteBuffer.wrap(device.peek(3L * BLOCK, BLOCK)))).isTrue();
        assertThat(codec.hasMagic(ByteBuffer.wrap(device.peek(2L * BLOCK, BLOCK)))).isFalse();
    }

    @Test
    void refusesAForeignImageNamingTheMagicAndOffset() throws Exception {
        var gfs2 = new SuperblockCodec("gfs2-like", "IOMAPGFS", 1);
        var device = new RamBlockDevice(BLOCK, 8 * BLOCK);
        gfs2.write(device, 2, ByteBuffer.allocate(0));

        assertThatThrownBy(() -> codec.read(device, 2))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("not a xfs-like image: magic 0x494f4d4150474653 \"IOMAPGFS\" at device offset 1024,"
                        + " expected 0x494f4d4150584653 \"IOMAPXFS\"");
        assertThatThrownBy(() -> codec.read(device, 0))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("not a xfs-like image: magic 0x0000000000000000 at device offset 0,"
                        + " expected 0x494f4d4150584653 \"IOMAPXFS\"");
    }

    @Test
    void refusesAnUnsupportedVersionNamingBothVersions() throws Exception {
        var newer = new SuperblockCodec("xfs-like", "IOMAPXFS".getBytes(StandardCharsets.US_ASCII), 1, 3);
        ByteBuffer image = newer.encode(ByteBuffer.allocate(4), BLOCK);

        assertThatThrownBy(() -> codec.decode(image, 8192))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("xfs-like superblock at device offset 8192 has format version 3;"
                        + " this build supports version 2");
        assertThat(newer.decode(codec.encode(ByteBuffer.allocate(4), BLOCK), 0).version()).isEqualTo(2);
        var older = new SuperblockCodec("xfs-like", "IOMAPXFS".getBytes(StandardCharsets.US_ASCII), 3, 4);
        ByteBuffer version2 = codec.encode(ByteBuffer.allocate(4), BLOCK);
        assertThatThrownBy(() -> older.decode(version2, 0))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessageEndingWith("has format version 2; this build supports versions 3 to 4");
    }

    @Test
    void refusesABadChecksumNamingStoredAndComputed() throws Exception {
        ByteBuffer image = codec.encode(ByteBuffer.wrap(new byte[] {1, 2, 3}), BLOCK);
        image.put(17, (byte) 0x7F);

        assertThatThrownBy(() -> codec.decode(image, 0))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessageStartingWith("xfs-like superblock at device offset 0 has a bad checksum:"
                        + " stored 0x94d97a41, computed 0x")
                .hasMessageNotContaining("computed 0x94d97a41");
    }

    @Test
    void refusesAPayloadLengthThatRunsPastTheBlock() throws Exception {
        ByteBuffer image = codec.encode(ByteBuffer.wrap(new byte[] {1, 2, 3}), BLOCK);
        image.order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(12, BLOCK - 19);

        assertThatThrownBy(() -> codec.decode(image, 512))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("xfs-like superblock at device offset 512 is truncated or damaged: payload length 493"
                        + " does not fit in 512 bytes");
        image.putInt(12, -1);
        assertThatThrownBy(() -> codec.decode(image, 512))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("payload length -1 does not fit");
    }

    @Test
    void refusesATruncatedBlock() throws Exception {
        ByteBuffer image = codec.encode(ByteBuffer.wrap(new byte[] {1, 2, 3}), BLOCK);

        assertThatThrownBy(() -> codec.decode(image.slice(0, 22), 0))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("xfs-like superblock at device offset 0 is truncated or damaged: payload length 3"
                        + " does not fit in 22 bytes");
        assertThatThrownBy(() -> codec.decode(image.slice(0, 10), 0))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("xfs-like superblock at device offset 0 is truncated: 10 bytes, the header and"
                        + " checksum alone take 20");
    }

    @Test
    void refusesAPayloadLargerThanABlock() {
        assertThat(SuperblockCodec.maxPayload(BLOCK)).isEqualTo(492);

        assertThatThrownBy(() -> codec.encode(ByteBuffer.allocate(493), BLOCK))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("xfs-like superblock payload of 493 bytes does not fit in a 512-byte block (at most 492)");
    }

    @Test
    void refusesBadMagicsAtConstruction() {
        assertThatThrownBy(() -> new SuperblockCodec("x", "SHORT", 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SuperblockCodec("x", new byte[8], 2, 1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aFullPayloadRoundTrips() throws Exception {
        byte[] payload = new byte[SuperblockCodec.maxPayload(BLOCK)];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 7);
        }
        var device = new PowerCutDevice(new RamBlockDevice(BLOCK, 2 * BLOCK));
        codec.write(device, 1, ByteBuffer.wrap(payload));

        assertThat(codec.read(device, 1).payload()).isEqualTo(ByteBuffer.wrap(payload));
        assertThat(device.stats().writes()).isEqualTo(1);
        assertThat(device.unflushedWrites()).isOne();
        assertThat(device.stats().dataBytesWritten()).isZero();
    }

    static String hex(ByteBuffer buffer, int offset, int length) {
        byte[] bytes = new byte[length];
        buffer.get(offset, bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
