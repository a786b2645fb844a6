package dev.iomap.adapter.support;

import static dev.iomap.adapter.support.SuperblockCodecTest.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class MetadataBlockTest {
    private static final int BLOCK = 1024;
    private static final int AGF = MetadataBlock.magic("AGF1");
    private static final int INODE = MetadataBlock.magic("INOD");

    private final RamBlockDevice device = new RamBlockDevice(BLOCK, 16 * BLOCK);

    @Test
    void magicReadsLikeItsText() {
        assertThat(AGF).isEqualTo(0x31464741);
        assertThatThrownBy(() -> MetadataBlock.magic("AGF")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void encodesHeaderPayloadAndChecksum() throws Exception {
        ByteBuffer block = new MetadataBlock(AGF, 7, 42, ByteBuffer.wrap(new byte[] {9, 8, 7})).encode(BLOCK);

        assertThat(block.remaining()).isEqualTo(BLOCK);
        assertThat(hex(block, 0, 31)).isEqualTo("41474631" + "03000000" + "0700000000000000" + "2a00000000000000"
                + "090807" + "6a527cd4");
        assertThat(hex(block, 31, BLOCK - 31)).matches("(00)+");
    }

    @Test
    void writesAndReadsBack() throws Exception {
        MetadataBlock.write(device, 7, AGF, 42, ByteBuffer.wrap(new byte[] {9, 8, 7}));

        MetadataBlock block = MetadataBlock.read(device, 7, AGF);

        assertThat(block).isEqualTo(new MetadataBlock(AGF, 7, 42, ByteBuffer.wrap(new byte[] {9, 8, 7})));
        assertThat(block.payload().isReadOnly()).isTrue();
        assertThat(device.stats().metadataBytesWritten()).isEqualTo(BLOCK);
        assertThat(device.stats().dataBytesWritten()).isZero();
        assertThat(block.toString()).isEqualTo(
                "MetadataBlock[0x31464741 \"AGF1\", block 7, sequence 42, 3 payload bytes]");
    }

    @Test
    void detectsAMisdirectedWrite() throws Exception {
        ByteBuffer meantFor7 = new MetadataBlock(AGF, 7, 1, ByteBuffer.wrap(new byte[] {1})).encode(BLOCK);
        BlockIo.write(device, 9, meantFor7, IoPurpose.METADATA);

        assertThatThrownBy(() -> MetadataBlock.read(device, 9, AGF))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("metadata block 9 (device offset 9216) (0x31464741 \"AGF1\"): holds the block written"
                        + " for block 7 (a misdirected or lost write)");
    }

    @Test
    void refusesAnotherTypeOrAnEmptyBlock() throws Exception {
        MetadataBlock.write(device, 3, INODE, ByteBuffer.allocate(10));

        assertThatThrownBy(() -> MetadataBlock.read(device, 3, AGF))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("metadata block 3 (device offset 3072): expected a 0x31464741 \"AGF1\" block,"
                        + " found magic 0x444f4e49 \"INOD\"");
        assertThatThrownBy(() -> MetadataBlock.read(device, 4, AGF))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("metadata block 4 (device offset 4096): expected a 0x31464741 \"AGF1\" block,"
                        + " found magic 0x00000000");
    }

    @Test
    void refusesABadChecksum() throws Exception {
        MetadataBlock.write(device, 5, AGF, 42, ByteBuffer.wrap(new byte[] {9, 8, 7}));
        device.poke(5L * BLOCK + 25, new byte[] {0}, 0, 1);

        assertThatThrownBy(() -> MetadataBlock.read(device, 5, AGF))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("metadata block 5 (device offset 5120) (0x31464741 \"AGF1\"): bad checksum:"
                        + " stored 0xa3e6bd55, computed 0x3ef27eed");
    }

    @Test
    void refusesAPayloadLengthPastTheBlock() throws Exception {
        MetadataBlock.write(device, 5, AGF, ByteBuffer.allocate(1));
        device.poke(5L * BLOCK + 4, new byte[] {(byte) 0xF0, 0x03, 0, 0}, 0, 4);

        assertThatThrownBy(() -> MetadataBlock.read(device, 5, AGF))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("metadata block 5 (device offset 5120) (0x31464741 \"AGF1\"): payload length 1008"
                        + " does not fit in 1024 bytes");
    }

    @Test
    void refusesATruncatedBuffer() {
        assertThatThrownBy(() -> MetadataBlock.decodeAnyType(ByteBuffer.allocate(20), 2))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("metadata block 2: truncated to 20 bytes");
    }

    @Test
    void refusesAPayloadTooLargeToWrite() {
        assertThat(MetadataBlock.maxPayload(BLOCK)).isEqualTo(996);

        assertThatThrownBy(() -> MetadataBlock.write(device, 1, AGF, ByteBuffer.allocate(997)))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("0x31464741 \"AGF1\" block 1: payload of 997 bytes does not fit in a 1024-byte block"
                        + " (at most 996)");
        assertThat(device.stats().writes()).isZero();
    }

    @Test
    void decodesAnyTypeForCallersThatAcceptSeveral() throws Exception {
        MetadataBlock.write(device, 2, INODE, 5, ByteBuffer.wrap(new byte[] {1}));

        MetadataBlock block = MetadataBlock.decodeAnyType(ByteBuffer.wrap(device.peek(2L * BLOCK, BLOCK)), 2);

        assertThat(block.type()).isEqualTo(INODE);
        assertThat(block.sequence()).isEqualTo(5);
    }

    @Test
    void refusesABlockOutsideTheDevice() {
        assertThatThrownBy(() -> MetadataBlock.read(device, 16, AGF))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("read: blocks [16, +1) are not inside the device's 16 blocks");
    }
}
