package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.SuperblockCodec;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.IomapFileSystems;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CorruptionTest {

    private static void assertRefused(XfsFixture fx, String... fragments) {
        var thrown = assertThatThrownBy(fx::mount).isInstanceOf(CorruptFileSystemException.class);
        for (String fragment : fragments) {
            thrown.hasMessageContaining(fragment);
        }
    }

    @Test
    void aForeignSuperblockIsRefused() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.unmountAndCheck();
            fx.device.write(0, ByteBuffer.wrap("EXT4-ISH".repeat(512).getBytes(StandardCharsets.US_ASCII)), dev.iomap.device.IoPurpose.METADATA)
                    .join();
            assertRefused(fx, "not a xfs-like image", "device offset 0");
            assertThat(IomapFileSystems.fsck("xfs-like", fx.device).problems()).singleElement().asString()
                    .contains("not a xfs-like image");
        }
    }

    @Test
    void aSuperblockWithABadChecksumIsRefused() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.unmountAndCheck();
            Images.flipByte(fx.device, 0, 30);
            assertRefused(fx, "bad checksum", "device offset 0");
        }
    }

    @Test
    void imagesOfOlderFormatVersionsAreRefusedInOneLine() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.unmountAndCheck();
            ByteBuffer payload = XfsSuperblock.CODEC.read(fx.device, 0).payload();
            for (int older : new int[] {1, 2}) {
                new SuperblockCodec("xfs-like", "XFS-LIKE", older).write(fx.device, 0, payload.duplicate());
                String message = "xfs-like superblock at device offset 0 has format version " + older
                        + "; this build supports version 3";
                assertThatThrownBy(fx::mount).isInstanceOf(CorruptFileSystemException.class).hasMessage(message);
                assertThat(IomapFileSystems.fsck("xfs-like", fx.device).problems()).containsExactly(message);
            }
            XfsSuperblock.CODEC.write(fx.device, 0, payload);
        }
    }

    @Test
    void aCorruptInodeTableBlockIsRefusedNamingIt() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.write("/f", pattern(1, 0, 1000)).close();
            fx.unmountAndCheck();
            XfsGeometry geometry = Images.geometry(fx.device);
            long block = geometry.inodeTableStart();
            Images.flipByte(fx.device, block, 100);
            assertRefused(fx, "metadata block " + block, "device offset " + block * 4096, "bad checksum");
            assertThat(IomapFileSystems.fsck("xfs-like", fx.device).problems())
                    .anySatisfy(p -> assertThat(p).contains("inode table").contains("device offset " + block * 4096));
        }
    }

    @Test
    void aCorruptDirectoryBlockIsRefusedNamingIt() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.write("/f", pattern(1, 0, 1000)).close();
            fx.unmountAndCheck();
            InodeState root = Images.load(fx.device).inodes.get(XfsGeometry.ROOT_INO);
            long block = ((Extent) root.data.lookup(0)).deviceBlock();
            Images.flipByte(fx.device, block, 40);
            assertRefused(fx, "metadata block " + block, "device offset " + block * 4096);
        }
    }

    @Test
    void aCorruptFreeSpaceLeafIsRefusedNamingIt() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.unmountAndCheck();
            XfsGeometry geometry = Images.geometry(fx.device);
            long block = geometry.freeLeafBlock(1, 0);
            Images.flipByte(fx.device, block, 0);
            assertRefused(fx, "metadata block " + block, "device offset " + block * 4096, "XBNO");
            assertThat(IomapFileSystems.fsck("xfs-like", fx.device).isClean()).isFalse();
            // Put it back so the fixture's final fsck passes.
            Images.flipByte(fx.device, block, 0);
        }
    }
}
