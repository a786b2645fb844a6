package dev.iomap.adapter.support.ns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ChainBlocks}: the payload layout and reading a chain back with every check. */
class ChainBlocksTest {
    private static final int BLOCK = 1024;
    private static final int TYPE = MetadataBlock.magic("TSYM");
    private static final BlockRange AREA = new BlockRange(4, 12);
    private static final long OWNER = 7;

    private final RamBlockDevice device = new RamBlockDevice(BLOCK, 16 * BLOCK);

    @Test
    void capacityIsTheMetadataPayloadLessTheHeader() {
        assertThat(ChainBlocks.capacity(BLOCK)).isEqualTo(BLOCK - 24 - 4 - 24).isEqualTo(972);
        assertThat(ChainBlocks.blocksFor(0, BLOCK)).isZero();
        assertThat(ChainBlocks.blocksFor(972, BLOCK)).isEqualTo(1);
        assertThat(ChainBlocks.blocksFor(973, BLOCK)).isEqualTo(2);
    }

    @Test
    void encodesOwnerNextIndexCountAndTheBytes() {
        ByteBuffer payload = ChainBlocks.encode(OWNER, 9, 1, new byte[] {1, 2, 3, 4, 5}, 3);

        byte[] bytes = new byte[payload.remaining()];
        payload.get(bytes);
        assertThat(HexFormat.of().formatHex(bytes)).isEqualTo("0700000000000000" + "0900000000000000" + "01000000"
                + "02000000" + "0405");
        assertThatThrownBy(() -> ChainBlocks.encode(OWNER, 0, 2, new byte[] {1, 2, 3, 4, 5}, 3))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void readsAChainBackInOrder() throws Exception {
        byte[] content = new byte[2000];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i * 31);
        }
        write(content, 5, 9, 6);
        List<Long> blocks = new ArrayList<>();

        byte[] back = ChainBlocks.read(device, TYPE, "symlink", 5, OWNER, 4096, AREA, blocks, "inode 7");

        assertThat(back).isEqualTo(content);
        assertThat(blocks).containsExactly(5L, 9L, 6L);
    }

    @Test
    void aBlockOutsideTheAreaOrRepeatedIsCorruption() throws Exception {
        assertThatThrownBy(() -> ChainBlocks.read(device, TYPE, "symlink", 2, OWNER, 4096, AREA, new ArrayList<>(),
                "inode 7")).isInstanceOf(CorruptFileSystemException.class).hasMessage(
                        "inode 7: symlink block 0 at block 2 (device offset 2048) is outside the data area or repeated");
        MetadataBlock.write(device, 5, TYPE, 1, ChainBlocks.encode(OWNER, 5, 0, new byte[972], 972));
        assertThatThrownBy(() -> ChainBlocks.read(device, TYPE, "xattr", 5, OWNER, 4096, AREA, new ArrayList<>(),
                "inode 7")).isInstanceOf(CorruptFileSystemException.class).hasMessage(
                        "inode 7: xattr block 1 at block 5 (device offset 5120) is outside the data area or repeated");
    }

    @Test
    void aForeignShortOrOverlongChainIsCorruption() throws Exception {
        write(new byte[100], 5);
        assertThatThrownBy(() -> ChainBlocks.read(device, TYPE, "symlink", 5, 8, 4096, AREA, new ArrayList<>(),
                "inode 8")).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("says owner 7, index 0, 100 bytes (100 stored, at most 972)");

        MetadataBlock.write(device, 5, TYPE, 1, ChainBlocks.encode(OWNER, 6, 0, new byte[10], 972));
        MetadataBlock.write(device, 6, TYPE, 1, ChainBlocks.encode(OWNER, 0, 0, new byte[10], 972));
        assertThatThrownBy(() -> ChainBlocks.read(device, TYPE, "symlink", 5, OWNER, 4096, AREA, new ArrayList<>(),
                "inode 7")).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("symlink block 1 at block 6 (device offset 6144) follows a block that is not full");

        write(new byte[1000], 5, 6);
        assertThatThrownBy(() -> ChainBlocks.read(device, TYPE, "symlink", 5, OWNER, 999, AREA, new ArrayList<>(),
                "inode 7")).isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("inode 7: its chain holds 1000 bytes, more than 999");
    }

    @Test
    void aBlockOfAnotherTypeIsCorruption() throws Exception {
        MetadataBlock.write(device, 5, MetadataBlock.magic("TXAT"), 1,
                ChainBlocks.encode(OWNER, 0, 0, new byte[10], 972));

        assertThatThrownBy(() -> ChainBlocks.read(device, TYPE, "symlink", 5, OWNER, 4096, AREA, new ArrayList<>(),
                "inode 7")).isInstanceOf(CorruptFileSystemException.class);
    }

    private void write(byte[] content, long... blocks) throws Exception {
        int capacity = ChainBlocks.capacity(BLOCK);
        for (int i = 0; i < blocks.length; i++) {
            long next = i + 1 < blocks.length ? blocks[i + 1] : 0;
            MetadataBlock.write(device, blocks[i], TYPE, 1, ChainBlocks.encode(OWNER, next, i, content, capacity));
        }
    }
}
