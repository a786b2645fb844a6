package dev.iomap.adapter.xfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.NewInodeAttributes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Version 3 slot fields that no structure elsewhere checks: forged with a valid checksum, each is refused
 * by mount and reported by fsck in one line naming the inode; restored, the image mounts again.
 */
class SlotCheckTest {

    /** Applies {@code forge} to inode {@code ino}'s slot (a little-endian view of its 296 bytes), re-checksummed. */
    private static ByteBuffer forgeSlot(XfsFixture fx, long ino, Consumer<ByteBuffer> forge) throws Exception {
        XfsGeometry geometry = Images.geometry(fx.device);
        long block = geometry.inodeBlock(ino);
        ByteBuffer original = MetadataBlock.read(fx.device, block, XfsLayout.INODE_TABLE).payload();
        ByteBuffer payload = ByteBuffer.allocate(original.remaining()).put(original.duplicate()).flip();
        int at = XfsLayout.INODE_TABLE_HEADER + (int) (ino % geometry.inodesPerBlock()) * XfsLayout.INODE_BYTES;
        forge.accept(payload.slice(at, XfsLayout.INODE_BYTES).order(ByteOrder.LITTLE_ENDIAN));
        MetadataBlock.write(fx.device, block, XfsLayout.INODE_TABLE, payload);
        fx.device.flush();
        return original;
    }

    private static void assertRefused(XfsFixture fx, String message) throws Exception {
        assertThatThrownBy(fx::mount).isInstanceOf(CorruptFileSystemException.class).hasMessageContaining(message);
        assertThat(IomapFileSystems.fsck("xfs-like", fx.device).problems())
                .anySatisfy(problem -> assertThat(problem).contains(message).doesNotContain("\n"));
    }

    private static void restore(XfsFixture fx, long ino, ByteBuffer original) throws Exception {
        MetadataBlock.write(fx.device, Images.geometry(fx.device).inodeBlock(ino), XfsLayout.INODE_TABLE, original);
        fx.device.flush();
        fx.mount();
    }

    @Test
    void badModeNanosecondsAndSecondsAreRefused() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.create("/f").close();
            long ino = fx.fs.stat("/f").ino();
            fx.unmountAndCheck();
            ByteBuffer original = forgeSlot(fx, ino, slot -> slot.putShort(2, (short) 010644));
            assertRefused(fx, "mode 010644");
            restore(fx, ino, original);
            fx.unmountAndCheck();
            forgeSlot(fx, ino, slot -> slot.putInt(76, 1_000_000_000));
            assertRefused(fx, "inode " + ino + " mtime has 1000000000 nanoseconds");
            restore(fx, ino, original);
            fx.unmountAndCheck();
            forgeSlot(fx, ino, slot -> slot.putLong(92, Long.MIN_VALUE));
            assertRefused(fx, "inode " + ino + " btime of " + Long.MIN_VALUE + " s is out of range");
            restore(fx, ino, original);
        }
    }

    @Test
    void aSymbolicLinkWithANulOrExtentsOrAnotherModeIsRefused() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.createSymbolicLink("/l", "target", new NewInodeAttributes(0, 0, 0));
            long ino = fx.fs.lstat("/l").ino();
            fx.unmountAndCheck();
            ByteBuffer original = forgeSlot(fx, ino, slot -> slot.put(XfsLayout.INODE_CORE_BYTES + 2, (byte) 0));
            assertRefused(fx, "symbolic link inode " + ino + ": its target holds a NUL byte");
            restore(fx, ino, original);
            fx.unmountAndCheck();
            forgeSlot(fx, ino, slot -> slot.putShort(2, (short) 0755));
            assertRefused(fx, "symbolic link inode " + ino + " of 6 bytes, mode 0755");
            restore(fx, ino, original);
            fx.unmountAndCheck();
            forgeSlot(fx, ino, slot -> slot.putLong(16, XfsLayout.INLINE_TARGET_BYTES + 1));
            assertRefused(fx, "symbolic link inode " + ino + " of " + (XfsLayout.INLINE_TARGET_BYTES + 1) + " bytes");
            restore(fx, ino, original);
            assertThat(fx.fs.readSymbolicLink("/l")).isEqualTo("target");
        }
    }
}
